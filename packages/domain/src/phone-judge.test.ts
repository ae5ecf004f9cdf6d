import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString, type CountryCode, type NumberType } from "libphonenumber-js/max";
import examples from "libphonenumber-js/mobile/examples";
import { numberTypeOf, parseNumber, type ParsedNumber } from "./phone";

/**
 * parseNumber and numberTypeOf classify a number once, with their own cached expressions,
 * instead of calling libphonenumber's isValid() and getType() (phone.ts, judge). They must
 * answer exactly as those do: here both are compared over numbers of every calling code,
 * valid and invalid, international and national, well and badly formed.
 */
const ALLOWED = /^[+\d\s().\-/]{3,40}$/;

/** parseNumber as it was: libphonenumber's own isValid() and getType(). */
function reference(input: string, defaultCountry?: string): ParsedNumber & { numberType?: NumberType | undefined } {
  const trimmed = input.trim();
  if (!ALLOWED.test(trimmed)) return { valid: false };
  let candidate = trimmed;
  const national = defaultCountry && !candidate.startsWith("+") && !candidate.startsWith("00");
  if (candidate.startsWith("00")) candidate = `+${candidate.slice(2)}`;
  else if (!candidate.startsWith("+") && !national) candidate = `+${candidate}`;
  const parsed = national ? parsePhoneNumberFromString(candidate, defaultCountry.toUpperCase() as CountryCode) : parsePhoneNumberFromString(candidate);
  if (!parsed || !parsed.isValid()) return { valid: false };
  return { valid: true, e164: parsed.number, country: parsed.country ?? null, numberType: parsed.getType() };
}

/** A small deterministic generator (mulberry32), so a failure names inputs that fail again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const next = random(14_3);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
const digits = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 10)).join("");
/** Changes a few digits of a number (most stay valid, some do not), sometimes its length. */
function mutate(national: string): string {
  const chars = [...national];
  for (let k = Math.floor(next() * 4); k > 0; k -= 1) chars[Math.floor(next() * chars.length)] = String(Math.floor(next() * 10));
  const r = next();
  if (r < 0.1) chars.pop();
  else if (r < 0.2) chars.push(String(Math.floor(next() * 10)));
  return chars.join("");
}
/** Phone punctuation as people type it. */
function dress(national: string): string {
  const r = next();
  if (r < 0.6) return national;
  if (r < 0.8) return national.replace(/(\d{3})(?=\d)/g, "$1 ");
  if (r < 0.9) return `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}`;
  return national.replace(/(\d{2})(?=\d)/g, "$1.");
}

const countries = getCountries();
/** Calling codes of more than one country share them: the country is picked by the number. */
const callingCodes = [...new Set([...countries.map((c) => getCountryCallingCode(c)), "800", "808", "870", "878", "881", "882", "883", "888", "979"])];

function inputs(): Array<[input: string, defaultCountry?: string]> {
  const out: Array<[string, string?]> = [];
  for (const country of countries) {
    const code = getCountryCallingCode(country);
    const example = getExampleNumber(country, examples)?.nationalNumber as string | undefined;
    for (let i = 0; i < 100; i += 1) {
      const national = example && i < 70 ? mutate(example) : digits(4 + Math.floor(next() * 11));
      const form = next();
      if (form < 0.5) out.push([`+${code}${dress(national)}`]);
      else if (form < 0.6) out.push([`00${code}${national}`]);
      else if (form < 0.7) out.push([`${code}${national}`]);
      // National numbers read in a country, with and without a national prefix, some in another country's plan.
      else if (form < 0.85) out.push([dress(national), next() < 0.8 ? country : pick(countries)]);
      else out.push([`${pick(["0", "1", "8", "00"])}${national}`, country.toLowerCase()]);
    }
  }
  for (const code of callingCodes) for (let i = 0; i < 40; i += 1) out.push([`+${code}${digits(3 + Math.floor(next() * 13))}`]);
  out.push(["+999123"], ["+12025550100"], ["+1 202-555-0101"], ["+493023125000"], ["+61491570156"], ["++1202555"], ["+1"], ["12"], ["+0123456789"], ["(202) 555-0101", "US"], ["+1 (212) 2000003"], ["  +44 20 7946 0958 "], ["0044 20 7946 0958"], ["+44 7700 900123", "DE"], ["+1 800 555 0199"]);
  return out;
}

describe("parseNumber's own classification", () => {
  const all = inputs();

  it("answers every number exactly as libphonenumber's isValid() and getType() do", () => {
    const differ: unknown[] = [];
    const typesSeen = new Set<string>();
    const countriesValid = new Set<string>();
    let valid = 0;
    for (const [input, country] of all) {
      const expected = reference(input, country);
      const withType = parseNumber(input, country, { withType: true });
      const plain = parseNumber(input, country);
      const { numberType: _type, ...expectedPlain } = expected as { numberType?: unknown };
      if (JSON.stringify(withType) !== JSON.stringify(expected) || JSON.stringify(plain) !== JSON.stringify(expected.valid ? expectedPlain : expected)) {
        differ.push({ input, country, expected, withType, plain });
      }
      if (expected.valid) {
        valid += 1;
        typesSeen.add(String(expected.numberType));
        if (expected.country) countriesValid.add(expected.country);
        if (numberTypeOf(expected.e164) !== parsePhoneNumberFromString(expected.e164)?.getType()) differ.push({ numberTypeOf: expected.e164 });
      }
    }
    expect(differ.slice(0, 10)).toEqual([]);
    // The comparison is only as broad as the numbers it saw: valid ones in most countries, of most types, and invalid ones.
    expect(all.length).toBeGreaterThan(25_000);
    expect(valid).toBeGreaterThan(all.length / 5);
    expect(all.length - valid).toBeGreaterThan(all.length / 4);
    expect(countriesValid.size).toBeGreaterThan(200);
    expect([...typesSeen].sort()).toEqual(expect.arrayContaining(["FIXED_LINE", "FIXED_LINE_OR_MOBILE", "MOBILE", "TOLL_FREE", "PREMIUM_RATE", "VOIP", "PAGER", "UAN", "VOICEMAIL", "SHARED_COST", "PERSONAL_NUMBER"]));
  });
});
