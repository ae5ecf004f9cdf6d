/**
 * The catalog of checks: codes, aliases, input kind, where each may run and the
 * attributes it answers with. Prices live in the store (per mode, with per-account
 * overrides); availability per account lives there too.
 */
export const CHECK_CODES = ["number.spam", "number.hlr", "whatsapp", "carrier", "signal.registered", "email"] as const;
export type CheckCode = (typeof CHECK_CODES)[number];
export type InputKind = "number" | "email";

/**
 * One attribute of a check's answer. `type` is a JSON type, `|null` when it may be
 * null; `values` lists the known values of a string attribute (an open list: new
 * values are an additive change, so clients treat an unknown one as unknown).
 */
export type AttributeDef = { name: string; type: string; description: string; values?: string[] };

export type CheckDef = {
  code: CheckCode;
  aliases: readonly string[];
  input: InputKind;
  /** Allowed on POST /v1/lookup; false = bulk jobs only. */
  realtime: boolean;
  /** `coming_soon` checks are hidden and refused until switched on for an account. */
  availability: "active" | "coming_soon";
  description: string;
  countries: readonly string[] | null;
  attributes: readonly AttributeDef[];
  /** What `registered` says for this check: true, false and null. */
  registered: string;
  /** Which answers are conclusive (`status: ok`, billed unless cached or in test mode). */
  billing: string;
  /** How long a conclusive live answer is reused (and not billed) for the same identifier. */
  cacheTtlSeconds: number;
};

const bool = (name: string, description: string): AttributeDef => ({ name, type: "boolean", description });

export const CHECKS: Readonly<Record<CheckCode, CheckDef>> = {
  "number.spam": {
    code: "number.spam",
    aliases: ["spam"],
    input: "number",
    realtime: true,
    availability: "active",
    description:
      "Whether the number appears in spam and nuisance-call reports: regulator actions, government complaint data, community reports and numbers recently offered as unassigned. Report-based: no_reports means no reports are held, not that the number is safe.",
    countries: ["US", "CA", "DE"],
    attributes: [
      { name: "risk_level", type: "string", description: "high, medium, low or no_reports", values: ["high", "medium", "low", "no_reports"] },
      { name: "risk_score", type: "integer", description: "0-100, higher = more reports" },
      bool("reason_regulator", "a regulator took action against the number"),
      bool("reason_government", "government complaint data lists the number"),
      bool("reason_community", "community spam reports name the number"),
      bool("reason_unassigned", "the number was offered as unassigned within the last 90 days"),
      bool("voip_range", "hint: the number is in a VoIP carrier range (adds no points)"),
      { name: "top_category", type: "string|null", description: "most frequent report category" },
      { name: "first_seen", type: "string|null", description: "YYYY-MM of the oldest report that still counts (reports stop counting after at most three years)" },
      { name: "last_seen", type: "string|null", description: "YYYY-MM of the newest report that counts" },
      { name: "sources", type: "integer", description: "number of independent signal classes" },
    ],
    registered:
      "true: spam or nuisance reports are held for the number (risk_level high, medium or low), so a scam number answers true; false: no reports are held (risk_level no_reports), which does not mean the number is safe; null: no answer (status other than ok).",
    billing: "Every risk_level, no_reports included, is a conclusive answer (status ok) and billed; unknown and unsupported_country (numbers outside US, CA, DE) are free.",
    cacheTtlSeconds: 24 * 3600,
  },
  "number.hlr": {
    code: "number.hlr",
    aliases: ["hlr"],
    input: "number",
    realtime: true,
    availability: "coming_soon",
    description: "Live home-network query: whether the number is reachable, ported or roaming (yes/no only, no location).",
    countries: null,
    attributes: [
      { name: "status", type: "string", description: "reachable, unreachable, invalid or unknown", values: ["reachable", "unreachable", "invalid", "unknown"] },
      bool("ported", "the number was ported to another network"),
      bool("roaming", "the subscriber is roaming (no location is given)"),
      { name: "network", type: "string|null", description: "current network name" },
      { name: "mcc_mnc", type: "string|null", description: "mobile country and network code" },
      { name: "country", type: "string|null", description: "ISO 3166-1 alpha-2 country of the network" },
    ],
    registered: "true: the home network answers the number as reachable; false: unreachable (switched off or out of coverage); null: the network says the number is invalid (attributes.status invalid), or no answer.",
    billing: "An answer from the home network (attributes.status reachable, unreachable or invalid) is conclusive and billed; no answer is unknown and free.",
    cacheTtlSeconds: 3600,
  },
  whatsapp: {
    code: "whatsapp",
    aliases: [],
    input: "number",
    realtime: true,
    availability: "active",
    description: "Whether the number has a WhatsApp account, and whether it is a business account.",
    countries: null,
    attributes: [bool("business", "the account is a WhatsApp Business account")],
    registered: "true: the number has a WhatsApp account; false: it has none; null: no answer.",
    billing: "A registered or not-registered answer is conclusive and billed; no answer is unknown and free.",
    cacheTtlSeconds: 7 * 24 * 3600,
  },
  carrier: {
    code: "carrier",
    aliases: [],
    input: "number",
    realtime: true,
    availability: "active",
    description:
      "Line type, original carrier and country from numbering-plan and number-block allocation data (NANPA, Bundesnetzagentur, Ofcom). The carrier is the one the number's block was allocated to; a ported number may be served by another (carrier_source says which kind of answer it is).",
    countries: null,
    attributes: [
      {
        name: "line_type",
        type: "string",
        description: "mobile, fixed_line, fixed_line_or_mobile, voip, toll_free, premium_rate, shared_cost, personal_number, pager, uan, voicemail or unknown",
        values: ["mobile", "fixed_line", "fixed_line_or_mobile", "voip", "toll_free", "premium_rate", "shared_cost", "personal_number", "pager", "uan", "voicemail", "unknown"],
      },
      { name: "carrier", type: "string|null", description: "carrier the number range was assigned to" },
      { name: "country", type: "string|null", description: "ISO 3166-1 alpha-2 country of the number" },
      {
        name: "carrier_source",
        type: "string|null",
        description: "allocation: the carrier the number's block was originally allocated to (a ported number may differ); network: the network serving the number now, from porting data; null when no carrier is named",
        values: ["allocation", "network"],
      },
    ],
    registered: "Always null: carrier says nothing about registration; its answer is in the attributes.",
    billing: "An answer naming a line type or a carrier is conclusive and billed; a number about which the numbering data says neither is unknown and free.",
    cacheTtlSeconds: 30 * 24 * 3600,
  },
  "signal.registered": {
    code: "signal.registered",
    aliases: [],
    input: "number",
    realtime: false,
    availability: "active",
    description: "Whether the number is registered with Signal. Bulk jobs only.",
    countries: null,
    attributes: [],
    registered: "true: the number is registered with Signal; false: it is not; null: no answer.",
    billing: "A registered or not-registered answer is conclusive and billed; no answer is unknown and free.",
    cacheTtlSeconds: 7 * 24 * 3600,
  },
  email: {
    code: "email",
    aliases: [],
    input: "email",
    realtime: true,
    availability: "active",
    description:
      "Whether the mailbox exists: syntax, MX records and an SMTP conversation that never sends mail. Answers nothing about the person.",
    countries: null,
    attributes: [
      bool("catch_all", "the domain accepts every address, so the mailbox cannot be confirmed"),
      bool("disposable", "the domain belongs to a disposable-address provider"),
      bool("mx_found", "the domain publishes mail exchangers (or an address record used as fallback)"),
      bool("role_account", "the local part (without a +tag) names a role or group, not a person: info, sales, postmaster …"),
      bool("free_provider", "the domain is a free mail provider where anyone can open an address (gmail.com, outlook.com …); sub-domains are not"),
      {
        name: "did_you_mean",
        type: "string|null",
        description: "the domain the address was probably meant for (gmial.com → gmail.com): given only when the typed domain receives no mail or is a known misspelling; null otherwise",
      },
    ],
    registered:
      "true: the mailbox exists (the mail server accepted the address and refused a random one); false: it does not (the server refused the address, or the domain receives no mail); null: a catch-all domain (attributes.catch_all true) or no answer.",
    billing:
      "Exists, does not exist and catch-all (registered null, catch_all true) are conclusive and billed; a server that does not answer clearly is unknown and free. role_account, free_provider and did_you_mean never change what is billed.",
    cacheTtlSeconds: 24 * 3600,
  },
};

const BY_NAME = new Map<string, CheckCode>();
for (const def of Object.values(CHECKS)) {
  BY_NAME.set(def.code, def.code);
  for (const alias of def.aliases) BY_NAME.set(alias, def.code);
}

/** Resolves a check code or alias (`spam`, `hlr`); undefined when unknown. */
export function resolveCheck(name: string): CheckCode | undefined {
  return BY_NAME.get(name);
}

export function checkDef(code: CheckCode): CheckDef {
  return CHECKS[code];
}

/** Whether a check covers a number's country (`number.spam`: US, CA, DE); others answer `unsupported_country`, free. */
export function coversCountry(code: CheckCode, country: string | null | undefined): boolean {
  const countries = CHECKS[code].countries;
  return countries === null || (!!country && countries.includes(country));
}
