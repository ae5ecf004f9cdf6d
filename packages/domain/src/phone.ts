import { parsePhoneNumberFromString, type NumberType } from "libphonenumber-js/max";

export type ParsedNumber =
  | { valid: true; e164: string; country: string | null; numberType: NumberType | undefined }
  | { valid: false };

const ALLOWED = /^[+\d\s().\-/]{3,40}$/;

/**
 * Numbers are given with their country code: `+CC…`, `00CC…`, or bare digits that
 * start with the country code. Anything libphonenumber does not consider a valid
 * number for its region is invalid (a free, reported row, never an error).
 */
export function parseNumber(input: string): ParsedNumber {
  const trimmed = input.trim();
  if (!ALLOWED.test(trimmed)) return { valid: false };
  let candidate = trimmed;
  if (candidate.startsWith("00")) candidate = `+${candidate.slice(2)}`;
  else if (!candidate.startsWith("+")) candidate = `+${candidate}`;
  const parsed = parsePhoneNumberFromString(candidate);
  if (!parsed || !parsed.isValid()) return { valid: false };
  return { valid: true, e164: parsed.number, country: parsed.country ?? null, numberType: parsed.getType() };
}
