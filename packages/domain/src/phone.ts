import { parsePhoneNumberFromString, type CountryCode, type NumberType } from "libphonenumber-js/max";

export type ParsedNumber =
  | { valid: true; e164: string; country: string | null; numberType?: NumberType | undefined }
  | { valid: false };

const ALLOWED = /^[+\d\s().\-/]{3,40}$/;

/**
 * Numbers are given with their country code: `+CC…`, `00CC…`, or bare digits that
 * start with the country code. Anything libphonenumber does not consider a valid
 * number for its region is invalid (a free, reported row, never an error).
 */
export function parseNumber(input: string, defaultCountry?: string, options: { withType?: boolean } = {}): ParsedNumber {
  const trimmed = input.trim();
  if (!ALLOWED.test(trimmed)) return { valid: false };
  let candidate = trimmed;
  // A national number is read in `defaultCountry` (CSV uploads with a country column).
  const national = defaultCountry && !candidate.startsWith("+") && !candidate.startsWith("00");
  if (candidate.startsWith("00")) candidate = `+${candidate.slice(2)}`;
  else if (!candidate.startsWith("+") && !national) candidate = `+${candidate}`;
  const parsed = national ? parsePhoneNumberFromString(candidate, defaultCountry.toUpperCase() as CountryCode) : parsePhoneNumberFromString(candidate);
  if (!parsed || !parsed.isValid()) return { valid: false };
  // The line type costs as much as validation again: only on request.
  return { valid: true, e164: parsed.number, country: parsed.country ?? null, ...(options.withType ? { numberType: parsed.getType() } : {}) };
}

/** Line type of a valid E.164 number (libphonenumber's classification), or undefined. */
export function numberTypeOf(e164: string): NumberType | undefined {
  return parsePhoneNumberFromString(e164)?.getType();
}

const LINE_TYPE_NAMES: Record<string, string> = {
  MOBILE: "mobile",
  FIXED_LINE: "fixed_line",
  FIXED_LINE_OR_MOBILE: "fixed_line_or_mobile",
  VOIP: "voip",
  TOLL_FREE: "toll_free",
  PREMIUM_RATE: "premium_rate",
  SHARED_COST: "shared_cost",
  PERSONAL_NUMBER: "personal_number",
  PAGER: "pager",
  UAN: "uan",
  VOICEMAIL: "voicemail",
};

/** The `line_type` attribute for a libphonenumber number type (`unknown` when there is none). */
export function lineTypeName(type: NumberType | undefined): string {
  return (type && LINE_TYPE_NAMES[type]) ?? "unknown";
}
