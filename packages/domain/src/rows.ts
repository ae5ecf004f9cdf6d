import type { NumberType } from "libphonenumber-js/max";
import type { InputKind } from "./checks";
import { parseEmail } from "./email";
import { parseNumber, type ParsedNumber } from "./phone";
import type { IdentifierStatus } from "./results";

/** One identifier of a request after parsing, in output order (numbers, then e-mails). */
export type PreparedRow = {
  rowNo: number;
  kind: InputKind;
  /** Index in the request's `numbers` or `emails` array, for `param` paths. */
  index: number;
  input: string;
  status: IdentifierStatus;
  e164: string | null;
  country: string | null;
  /** Only when known already; compute with numberTypeOf(e164) where needed. */
  numberType: NumberType | undefined;
  email: string | null;
  domain: string | null;
};

/**
 * Parses and de-duplicates a request's identifiers. A later identical identifier
 * (same E.164 number, or same address compared case-insensitively) is a
 * `duplicate` row: reported, never checked, never billed.
 */
export function prepareRows(
  numbers: ReadonlyArray<string | { input: string; country?: string | null }>,
  emails: readonly string[],
  /** Numbers parsed already (e.g. on worker threads), in the same order. */
  parsedNumbers?: readonly ParsedNumber[],
): PreparedRow[] {
  const rows: PreparedRow[] = [];
  const seen = new Set<string>();
  // Every row is built by one literal with one field order: one hidden class for all
  // 50,000 rows keeps the later passes (counts, filters, hashing) monomorphic.
  const push = (kind: InputKind, index: number, input: string, status: IdentifierStatus, found: Pick<PreparedRow, "e164" | "country" | "numberType" | "email" | "domain">) =>
    rows.push({ rowNo: rows.length + 1, kind, index, input, status, e164: found.e164, country: found.country, numberType: found.numberType, email: found.email, domain: found.domain });
  const nothing = { e164: null, country: null, numberType: undefined, email: null, domain: null };
  const firstTime = (key: string): IdentifierStatus => {
    if (seen.has(key)) return "duplicate";
    seen.add(key);
    return "valid";
  };
  numbers.forEach((given, index) => {
    const input = typeof given === "string" ? given : given.input;
    const parsed = parsedNumbers?.[index] ?? parseNumber(input, typeof given === "string" ? undefined : (given.country ?? undefined));
    if (!parsed.valid) push("number", index, input, "invalid", nothing);
    else push("number", index, input, firstTime(parsed.e164), { ...nothing, e164: parsed.e164, country: parsed.country, numberType: parsed.numberType });
  });
  emails.forEach((input, index) => {
    const parsed = parseEmail(input);
    if (!parsed.valid) push("email", index, input, "invalid", nothing);
    else push("email", index, input, firstTime(`@${parsed.email.toLowerCase()}`), { ...nothing, email: parsed.email, domain: parsed.domain });
  });
  return rows;
}
