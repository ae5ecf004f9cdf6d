import { normaliseCategory } from "./categories";
import { isSpamCountry, normaliseNumber, SPAM_COUNTRIES, type SpamCountry } from "./numbers";
import { dedupeKey, firstDay, squeeze, type Row, type RowContext, type SkipReason, type SourceSpec } from "./types";

/** The country a regulator's national numbers belong to. */
const REGULATOR_COUNTRY: Record<string, SpamCountry> = { fcc: "US", ftc: "US", crtc: "CA", bnetza: "DE", bundesnetzagentur: "DE" };

/**
 * The country for national numbers of a row: its own `country` column, else
 * (for regulator actions) the regulator's country, else `--country`. A country
 * column naming a country the check does not cover makes the row unsupported.
 */
export function rowCountry(row: Row, ctx: RowContext, implied: SpamCountry | null = null): SpamCountry | null | "unsupported" {
  const given = squeeze(row.get("country")).toUpperCase();
  if (given !== "") return isSpamCountry(given) ? given : "unsupported";
  return implied ?? ctx.country;
}

/** A row's `number` in E.164, read in the row's country (see rowCountry), or why the row is skipped. */
export function rowNumber(row: Row, ctx: RowContext, implied: SpamCountry | null = null): { e164: string } | { skip: SkipReason } {
  const country = rowCountry(row, ctx, implied);
  if (country === "unsupported") return { skip: "unsupported_country" };
  const number = normaliseNumber(row.get("number"), country, SPAM_COUNTRIES);
  return number.ok ? { e164: number.e164 } : { skip: number.reason };
}

/** Regulator actions: `number,action_date,regulator,category[,country]`. */
export const regulator: SourceSpec = {
  name: "regulator",
  source: "regulator_actions",
  signalClass: "regulator",
  columns: [
    { name: "number", required: true },
    { name: "action_date", required: true },
    { name: "regulator", required: true },
    { name: "category", required: true },
    { name: "country", required: false },
  ],
  acceptsCountry: true,
  read(row, ctx) {
    const authority = squeeze(row.get("regulator")).toLowerCase();
    if (authority === "") return { skip: "missing_regulator" };
    const number = rowNumber(row, ctx, REGULATOR_COUNTRY[authority] ?? null);
    if ("skip" in number) return number;
    const day = firstDay([row.get("action_date")], ctx.latest);
    if (typeof day !== "string") return day;
    const category = normaliseCategory(row.get("category"));
    return { e164: number.e164, category, reportedOn: day, dedupeKey: dedupeKey(this.source, number.e164, day, [authority, category ?? ""]) };
  },
};
