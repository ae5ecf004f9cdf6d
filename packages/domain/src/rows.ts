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
  numbers.forEach((given, index) => {
    const input = typeof given === "string" ? given : given.input;
    const parsed = parsedNumbers?.[index] ?? parseNumber(input, typeof given === "string" ? undefined : (given.country ?? undefined));
    const base = { rowNo: rows.length + 1, kind: "number" as const, index, input, email: null, domain: null };
    if (!parsed.valid) {
      rows.push({ ...base, status: "invalid", e164: null, country: null, numberType: undefined });
      return;
    }
    const status: IdentifierStatus = seen.has(parsed.e164) ? "duplicate" : "valid";
    seen.add(parsed.e164);
    rows.push({ ...base, status, e164: parsed.e164, country: parsed.country, numberType: parsed.numberType });
  });
  emails.forEach((input, index) => {
    const parsed = parseEmail(input);
    const base = { rowNo: rows.length + 1, kind: "email" as const, index, input, e164: null, country: null, numberType: undefined };
    if (!parsed.valid) {
      rows.push({ ...base, status: "invalid", email: null, domain: null });
      return;
    }
    const dedupeKey = `@${parsed.email.toLowerCase()}`;
    const status: IdentifierStatus = seen.has(dedupeKey) ? "duplicate" : "valid";
    seen.add(dedupeKey);
    rows.push({ ...base, status, email: parsed.email, domain: parsed.domain });
  });
  return rows;
}
