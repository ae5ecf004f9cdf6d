import { carrierName, parseEffectiveDay, squeeze, type CarrierRowResult, type CarrierSourceSpec, type Row } from "./types";

/** NANP territories in NANPA's state column whose ISO country is not US (NN: Northern Mariana Islands). */
const TERRITORY: Readonly<Record<string, string>> = { PR: "PR", VI: "VI", GU: "GU", AS: "AS", NN: "MP", MP: "MP" };

function country(state: string | undefined): string {
  return TERRITORY[squeeze(state).toUpperCase()] ?? "US";
}

/** NPA (area code) and NXX (central office code) each start with 2-9. */
const NPA_NXX = /^[2-9]\d{2}[2-9]\d{2}$/;

/** `201-200`, `201200`, or NPA and NXX in columns of their own → the 6 digits, or why not. */
function npaNxx(row: Row): string | { skip: "missing_block" | "invalid_block" } {
  const joined = row.get("NPA-NXX");
  const raw = joined !== undefined ? squeeze(joined) : `${squeeze(row.get("NPA"))}${squeeze(row.get("NXX"))}`;
  if (raw === "" || raw === "-") return { skip: "missing_block" };
  if (!/^[\d\s-]+$/.test(raw)) return { skip: "invalid_block" };
  const digits = raw.replace(/\D/g, "");
  return NPA_NXX.test(digits) ? digits : { skip: "invalid_block" };
}

/**
 * NANPA Central Office Code assignment records, "utilized codes" (allutlzd.txt, tab
 * separated): State, NPA-NXX, OCN, Company, RateCenter, EffectiveDate, Use,
 * AssignDate, Initial/Growth. One block per NPA-NXX (10,000 numbers): prefix
 * 1 + NPA + NXX. RateCenter, Use, AssignDate and Initial/Growth are not read.
 */
export const nanpaCo: CarrierSourceSpec = {
  name: "nanpa-co",
  source: "nanpa_co_codes",
  columns: [
    { name: "NPA-NXX", required: false },
    { name: "NPA", required: false },
    { name: "NXX", required: false },
    { name: "Company", required: true, aliases: ["Company Name", "OCN Name"] },
    { name: "State", required: false },
    { name: "OCN", required: false },
    { name: "EffectiveDate", required: false, aliases: ["Effective Date"] },
  ],
  alternatives: [["NPA-NXX"], ["NPA", "NXX"]],
  read(row): CarrierRowResult {
    const code = npaNxx(row);
    if (typeof code !== "string") return code;
    const carrier = carrierName(row.get("Company"));
    if (carrier === null) return { skip: "missing_carrier" };
    return { prefix: `1${code}`, country: country(row.get("State")), carrier, effectiveOn: parseEffectiveDay(row.get("EffectiveDate"), "mdy") };
  },
};

/** Thousands-block statuses that mean "assigned to the named carrier" (AS in the pooling reports). */
const ASSIGNED = /^(as|assigned)$/i;

/**
 * National Pooling Administrator thousands-block report (AllBlocksAugmentedReport,
 * comma separated): Region, State, NPA, NXX, X, Status, …, Rate Center, …, Company,
 * OCN, Effective Date. One block per NPA-NXX-X (1,000 numbers): prefix
 * 1 + NPA + NXX + X. Only rows whose status is AS (assigned) are stored when the
 * file has a status column.
 */
export const nanpaThousands: CarrierSourceSpec = {
  name: "nanpa-thousands",
  source: "nanpa_thousands_blocks",
  columns: [
    { name: "NPA-NXX", required: false },
    { name: "NPA", required: false },
    { name: "NXX", required: false },
    { name: "X", required: true, aliases: ["Block", "Block ID", "Thousands Block"] },
    { name: "Company", required: true, aliases: ["Company Name", "OCN Name", "Block Holder"] },
    { name: "State", required: false },
    { name: "OCN", required: false },
    { name: "Status", required: false },
    { name: "Effective Date", required: false, aliases: ["EffectiveDate"] },
  ],
  alternatives: [["NPA-NXX"], ["NPA", "NXX"]],
  read(row): CarrierRowResult {
    const code = npaNxx(row);
    if (typeof code !== "string") return code;
    const x = squeeze(row.get("X"));
    if (x === "") return { skip: "missing_block" };
    if (!/^\d$/.test(x)) return { skip: "invalid_block" };
    const status = row.get("Status");
    if (status !== undefined && !ASSIGNED.test(squeeze(status))) return { skip: "not_assigned" };
    const carrier = carrierName(row.get("Company"));
    if (carrier === null) return { skip: "missing_carrier" };
    return { prefix: `1${code}${x}`, country: country(row.get("State")), carrier, effectiveOn: parseEffectiveDay(row.get("Effective Date"), "mdy") };
  },
};
