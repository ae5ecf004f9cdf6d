import { carrierName, parseEffectiveDay, squeeze, type CarrierRowResult, type CarrierSourceSpec } from "./types";

/** German mobile range codes (015x, 016x, 017x): allocated whole, without a block column. */
const MOBILE = /^1[5-7]\d{1,3}$/;

/** An area code as written (`030`, `(0)30`, `30`, `0 30`) → its digits without the trunk 0. */
function areaCode(text: string | undefined): string | null {
  const raw = squeeze(text).replace(/^\(0\)\s*/, "");
  if (raw === "" || !/^[\d\s/]+$/.test(raw)) return null;
  const digits = raw.replace(/\D/g, "").replace(/^0/, "");
  return /^[1-9]\d{1,4}$/.test(digits) ? digits : null;
}

/**
 * A block as written: its leading digits (`23125`), or a range `2312500-2312599`
 * (also with "bis") that covers whole decades, reduced to the digits all its
 * numbers share. Null when it is neither.
 */
export function blockDigits(text: string): string | null {
  const value = squeeze(text);
  if (/^\d[\d\s]*$/.test(value)) return value.replace(/\s/g, "");
  const m = /^(\d[\d\s]*?)\s*(?:-|–|bis)\s*(\d[\d\s]*)$/i.exec(value);
  if (!m) return null;
  const from = (m[1] as string).replace(/\s/g, "");
  const to = (m[2] as string).replace(/\s/g, "");
  if (from.length !== to.length) return null;
  let n = from.length;
  while (n > 0 && from[n - 1] === "0" && to[n - 1] === "9") n -= 1;
  if (n === from.length || from.slice(0, n) !== to.slice(0, n)) return null;
  return from.slice(0, n);
}

/**
 * Bundesnetzagentur allocations of number blocks (Ortsnetzrufnummern: area code and
 * block; Mobile Dienste: the range code, allocated whole). Semicolon separated,
 * usually Windows-1252: Ortsnetzkennzahl (ONKz), Ortsnetzname, Rufnummernblock,
 * Zuteilungsnehmer, Zuteilungsdatum. Prefix: 49 + area code without 0 + block.
 */
export const bnetza: CarrierSourceSpec = {
  name: "bnetza",
  source: "bnetza",
  columns: [
    { name: "Ortsnetzkennzahl", required: true, aliases: ["ONKz", "Vorwahl", "Bereichskennzahl", "Kennzahl", "Rufnummernbereich"] },
    { name: "Rufnummernblock", required: false, aliases: ["RNB", "Block", "Nummernblock"] },
    { name: "Zuteilungsnehmer", required: true, aliases: ["Zuteilungsinhaber", "Anbieter", "Netzbetreiber"] },
    { name: "Zuteilungsdatum", required: false, aliases: ["Datum", "Zuteilung"] },
  ],
  read(row): CarrierRowResult {
    const area = squeeze(row.get("Ortsnetzkennzahl"));
    if (area === "") return { skip: "missing_block" };
    const code = areaCode(area);
    if (code === null) return { skip: "invalid_block" };
    const blockText = squeeze(row.get("Rufnummernblock"));
    let block = "";
    if (blockText === "") {
      if (!MOBILE.test(code)) return { skip: "missing_block" };
    } else {
      const digits = blockDigits(blockText);
      if (digits === null) return { skip: "invalid_block" };
      block = digits;
    }
    const prefix = `49${code}${block}`;
    if (prefix.length < 5 || prefix.length > 15) return { skip: "invalid_block" };
    const carrier = carrierName(row.get("Zuteilungsnehmer"));
    if (carrier === null) return { skip: "missing_carrier" };
    return { prefix, country: "DE", carrier, effectiveOn: parseEffectiveDay(row.get("Zuteilungsdatum"), "dmy") };
  },
};
