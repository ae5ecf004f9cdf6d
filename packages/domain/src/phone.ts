import { Metadata, type MetadataJson } from "libphonenumber-js/core";
import { parsePhoneNumberFromString, type CountryCode, type NumberType, type PhoneNumber } from "libphonenumber-js/max";

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
  if (!parsed) return { valid: false };
  const judged = judge(parsed);
  if (!judged.valid) return { valid: false };
  return { valid: true, e164: parsed.number, country: parsed.country ?? null, ...(options.withType ? { numberType: judged.type } : {}) };
}

/** Line type of a valid E.164 number (libphonenumber's classification), or undefined. */
export function numberTypeOf(e164: string): NumberType | undefined {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed ? judge(parsed).type : undefined;
}

/*
 * libphonenumber's isValid() and getType() each classify the number afresh (getNumberType),
 * and every classification builds its regular expressions anew from the metadata's
 * pattern text (~7 µs a number for the US patterns): a third of a 50,000-row job's
 * parsing. judge() classifies once, with each numbering plan's expressions built once,
 * and answers both: the same code path as libphonenumber 1.12's getNumberType and
 * isValidNumber (helpers/getNumberType.js, isValid.js), over the same metadata read
 * through the same accessors (of the metadata the number was parsed with). phone-judge.test.ts compares it with isValid() and
 * getType() over numbers of every calling code; the version is pinned (package.json).
 */

/** A number type's rule: its whole-number pattern and the national lengths it allows; null never matches. */
type TypeRule = { pattern: RegExp; lengths: readonly number[] | undefined } | null;

type Plan = {
  /** Without type patterns, a number is valid by the plan's national pattern alone (and has no type). */
  hasTypes: boolean;
  national: RegExp;
  fixedLine: TypeRule;
  /** No separate mobile pattern (absent, or empty because it equals the fixed-line one). */
  mobileAsFixedLine: boolean;
  mobile: TypeRule;
  others: ReadonlyArray<readonly [NumberType, TypeRule]>;
};

/** The accessors of libphonenumber's Metadata its typings leave out (metadata.js, NumberingPlan and Type). */
type PlanMetadata = {
  selectNumberingPlan(country: string | undefined, callingCode: string): PlanMetadata;
  nationalNumberPattern(): string;
  hasTypes(): boolean;
  type(type: NumberType): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
};

const NON_FIXED_LINE_TYPES: readonly NumberType[] = ["MOBILE", "PREMIUM_RATE", "TOLL_FREE", "SHARED_COST", "VOIP", "PERSONAL_NUMBER", "PAGER", "UAN", "VOICEMAIL"];

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);

function buildPlan(json: MetadataJson, country: string | undefined, callingCode: string): Plan {
  const metadata = (new Metadata(json) as unknown as PlanMetadata).selectNumberingPlan(country, callingCode);
  const rule = (type: NumberType): TypeRule => {
    const t = metadata.type(type);
    return t && t.pattern() ? { pattern: whole(t.pattern()), lengths: t.possibleLengths() } : null;
  };
  const mobile = metadata.type("MOBILE");
  return {
    hasTypes: metadata.hasTypes(),
    national: whole(metadata.nationalNumberPattern()),
    fixedLine: rule("FIXED_LINE"),
    mobileAsFixedLine: !mobile || mobile.pattern() === "",
    mobile: rule("MOBILE"),
    others: NON_FIXED_LINE_TYPES.map((type) => [type, rule(type)] as const),
  };
}

const plans = new Map<string, Plan>();

/** The plan a parsed number is judged by (built from the metadata it was parsed with: libphonenumber-js/max's). */
function planOf(parsed: PhoneNumber): Plan {
  const key = `${parsed.country ?? ""}+${parsed.countryCallingCode}`;
  let plan = plans.get(key);
  if (!plan) plans.set(key, (plan = buildPlan((parsed as unknown as { getMetadata(): MetadataJson }).getMetadata(), parsed.country, parsed.countryCallingCode)));
  return plan;
}

const matches = (rule: TypeRule, national: string) => rule !== null && (!rule.lengths || rule.lengths.includes(national.length)) && rule.pattern.test(national);

/** isValid() and getType() of a parsed number, with one classification. */
function judge(parsed: PhoneNumber): { valid: boolean; type: NumberType | undefined } {
  const plan = planOf(parsed);
  const national = parsed.nationalNumber;
  const type = typeIn(plan, national);
  return { valid: plan.hasTypes ? type !== undefined : plan.national.test(national), type };
}

function typeIn(plan: Plan, national: string): NumberType | undefined {
  if (!plan.national.test(national)) return undefined;
  if (matches(plan.fixedLine, national)) return plan.mobileAsFixedLine || matches(plan.mobile, national) ? "FIXED_LINE_OR_MOBILE" : "FIXED_LINE";
  for (const [type, rule] of plan.others) if (matches(rule, national)) return type;
  return undefined;
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
