import { carrierName, parseEffectiveDay, squeeze, type CarrierRowResult, type CarrierSourceSpec } from "./types";

/** Statuses of blocks held by a provider ("Allocated", "Allocated(Closed Range)"); Free, Protected, Reserved… are not. */
const ALLOCATED = /^allocated/i;

/** UK national significant numbers start with 1, 2, 3, 5, 7, 8 or 9. */
const UK_BLOCK = /^[1235789]\d{2,12}$/;

/**
 * Ofcom numbering data (sabc.csv, S1.csv … S9.csv, comma separated): Number Block,
 * Status, Size of Block, Communications Provider, Date Allocation/Change. The older
 * Oftel-style layout (SABC, D/DE, Status, Date, Operator) is read too. Prefix:
 * 44 + the block without its trunk 0 (`01632 960` → 441632960).
 */
export const ofcom: CarrierSourceSpec = {
  name: "ofcom",
  source: "ofcom",
  columns: [
    { name: "Number Block", required: false, aliases: ["Number Range", "Block"] },
    { name: "SABC", required: false },
    { name: "D/DE", required: false, aliases: ["DE", "D"] },
    { name: "Status", required: true },
    { name: "Communications Provider", required: true, aliases: ["Communication Provider", "CP", "Operator", "Provider"] },
    { name: "Date Allocation/Change", required: false, aliases: ["Date Allocated", "Allocation Date", "Date"] },
  ],
  alternatives: [["Number Block"], ["SABC"]],
  read(row): CarrierRowResult {
    const block = row.get("Number Block");
    const raw = block !== undefined ? squeeze(block) : `${squeeze(row.get("SABC"))}${squeeze(row.get("D/DE"))}`;
    if (raw === "") return { skip: "missing_block" };
    if (!/^[\d\s]+$/.test(raw)) return { skip: "invalid_block" };
    const digits = raw.replace(/\s/g, "").replace(/^0/, "");
    if (!UK_BLOCK.test(digits)) return { skip: "invalid_block" };
    if (!ALLOCATED.test(squeeze(row.get("Status")))) return { skip: "not_assigned" };
    const carrier = carrierName(row.get("Communications Provider"));
    if (carrier === null) return { skip: "missing_carrier" };
    return { prefix: `44${digits}`, country: "GB", carrier, effectiveOn: parseEffectiveDay(row.get("Date Allocation/Change"), "dmy") };
  },
};
