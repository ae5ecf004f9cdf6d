import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { parseNumber } from "@svc/domain";

/** The countries `number.spam` answers for: only their numbers are stored. */
export const SPAM_COUNTRIES = ["US", "CA", "DE"] as const;
export type SpamCountry = (typeof SPAM_COUNTRIES)[number];

export function isSpamCountry(value: string): value is SpamCountry {
  return (SPAM_COUNTRIES as readonly string[]).includes(value);
}

export type NumberSkip = "missing_number" | "invalid_number" | "unsupported_country" | "no_country";
export type NormalisedNumber = { ok: true; e164: string; country: SpamCountry } | { ok: false; reason: NumberSkip };

const NATIONAL = /^[\d\s().\-/]{3,40}$/;

/**
 * E.164 for a reported number. International input (`+CC…`, `00CC…`) is read the
 * way the check reads a lookup (`parseNumber`), so the stored key is the one a
 * lookup asks for; national input (`(202) 555-0123`, `030 23125 417`) needs a
 * country. Numbers that are not valid for their region, or whose country is not
 * in `allowed`, are refused with a reason.
 */
export function normaliseNumber(raw: string | undefined, defaultCountry: SpamCountry | null, allowed: readonly SpamCountry[]): NormalisedNumber {
  const text = (raw ?? "").trim();
  if (text === "") return { ok: false, reason: "missing_number" };
  let e164: string;
  let country: string | null;
  if (text.startsWith("+") || text.startsWith("00")) {
    const parsed = parseNumber(text);
    if (!parsed.valid) return { ok: false, reason: "invalid_number" };
    ({ e164, country } = parsed);
  } else {
    if (!NATIONAL.test(text)) return { ok: false, reason: "invalid_number" };
    if (defaultCountry === null) return { ok: false, reason: "no_country" };
    const parsed = parsePhoneNumberFromString(text, defaultCountry);
    if (!parsed || !parsed.isValid()) return { ok: false, reason: "invalid_number" };
    e164 = parsed.number;
    country = parsed.country ?? null;
  }
  if (country === null || !isSpamCountry(country) || !allowed.includes(country)) return { ok: false, reason: "unsupported_country" };
  return { ok: true, e164, country };
}
