import { createHash } from "node:crypto";
import { coversCountry, type CheckCode } from "./checks";
import { lineTypeName, numberTypeOf } from "./phone";
import type { PreparedRow } from "./rows";
import type { CheckStatus, IdentifierStatus } from "./results";

/**
 * Test mode: fixed data, never billed, never reaches a data source. Documented test
 * values give fixed answers covering every outcome a client must handle; any other
 * valid identifier gets a deterministic fake answer derived from a hash of the
 * check and the identifier (same input, same answer, on every replica, forever).
 * The table below is the single source for docs/test-mode.md.
 */
export const TEST_EMAIL_DOMAIN = "example.com";

export type Answer = { status: CheckStatus; registered: boolean | null; attributes: Record<string, unknown> | null };

export type TestProfile = {
  value: string;
  kind: "number" | "email";
  summary: string;
  /** Row-level outcome other than `valid`. */
  rowStatus?: Exclude<IdentifierStatus, "valid" | "duplicate">;
  /** The lookup stays `pending` this long after creation, then completes. */
  pendingSeconds?: number;
  /** The whole request fails with `503 temporarily_unavailable` (not stored, not charged). */
  unavailable?: boolean;
  answers: Partial<Record<CheckCode, Answer>>;
};

type SpamFacts = {
  level: "high" | "medium" | "low" | "no_reports";
  score: number;
  regulator?: boolean;
  government?: boolean;
  community?: boolean;
  unassigned?: boolean;
  voip?: boolean;
  category?: string;
  first?: string;
  last?: string;
};

export function spamAnswer(f: SpamFacts): Answer {
  const reasons = [f.regulator, f.government, f.community, f.unassigned].filter(Boolean).length;
  return {
    status: "ok",
    registered: f.level !== "no_reports",
    attributes: {
      risk_level: f.level,
      risk_score: f.score,
      reason_regulator: Boolean(f.regulator),
      reason_government: Boolean(f.government),
      reason_community: Boolean(f.community),
      reason_unassigned: Boolean(f.unassigned),
      voip_range: Boolean(f.voip),
      top_category: f.category ?? null,
      first_seen: f.first ?? null,
      last_seen: f.last ?? null,
      sources: reasons,
    },
  };
}

const registered = (yes: boolean, attributes: Record<string, unknown> | null = null): Answer => ({
  status: "ok",
  registered: yes,
  attributes,
});
const status = (s: CheckStatus): Answer => ({ status: s, registered: null, attributes: null });
const carrier = (lineType: string, name: string | null, country: string | null): Answer => ({
  status: "ok",
  registered: null,
  attributes: { line_type: lineType, carrier: name, country },
});
const hlr = (s: "reachable" | "unreachable" | "invalid", extra: { ported?: boolean; roaming?: boolean } = {}): Answer => ({
  status: "ok",
  registered: s === "reachable" ? true : s === "unreachable" ? false : null,
  attributes: {
    status: s,
    ported: Boolean(extra.ported),
    roaming: Boolean(extra.roaming),
    network: s === "invalid" ? null : "Test Network",
    mcc_mnc: s === "invalid" ? null : "00101",
    country: s === "invalid" ? null : "US",
  },
});
const mailbox = (exists: boolean | null, extra: { catchAll?: boolean; disposable?: boolean } = {}): Answer => ({
  status: "ok",
  registered: exists,
  attributes: { catch_all: Boolean(extra.catchAll), disposable: Boolean(extra.disposable), mx_found: true },
});

const CLEAN_NUMBER: Partial<Record<CheckCode, Answer>> = {
  "number.spam": spamAnswer({ level: "no_reports", score: 0 }),
  whatsapp: registered(true, { business: false }),
  carrier: carrier("mobile", "Test Wireless", "US"),
  "signal.registered": registered(true),
  "number.hlr": hlr("reachable"),
};
const ALL_UNKNOWN: Partial<Record<CheckCode, Answer>> = {
  "number.spam": status("unknown"),
  whatsapp: status("unknown"),
  carrier: status("unknown"),
  "signal.registered": status("unknown"),
  "number.hlr": status("unknown"),
  email: status("unknown"),
};
const DELIVERABLE = { email: mailbox(true) };

export const TEST_PROFILES: readonly TestProfile[] = [
  { value: "+12025550100", kind: "number", summary: "clean mobile: no spam reports, on WhatsApp and Signal, reachable", answers: CLEAN_NUMBER },
  {
    value: "+12025550101",
    kind: "number",
    summary: "known scam line: spam high (regulator, government and community reports), VoIP, not on WhatsApp, unreachable",
    answers: {
      "number.spam": spamAnswer({ level: "high", score: 94, regulator: true, government: true, community: true, voip: true, category: "impersonation", first: "2024-03", last: "2026-10" }),
      whatsapp: registered(false, { business: false }),
      carrier: carrier("voip", "Test VoIP", "US"),
      "signal.registered": registered(false),
      "number.hlr": hlr("unreachable"),
    },
  },
  {
    value: "+12025550102",
    kind: "number",
    summary: "telemarketer: spam medium (government complaints), WhatsApp Business, fixed line, ported",
    answers: {
      "number.spam": spamAnswer({ level: "medium", score: 45, government: true, category: "telemarketing", first: "2025-01", last: "2026-09" }),
      whatsapp: registered(true, { business: true }),
      carrier: carrier("fixed_line", "Test Telecom", "US"),
      "signal.registered": registered(false),
      "number.hlr": hlr("reachable", { ported: true }),
    },
  },
  {
    value: "+12025550103",
    kind: "number",
    summary: "single community report: spam low, not on WhatsApp, roaming",
    answers: {
      "number.spam": spamAnswer({ level: "low", score: 12, community: true, category: "robocall", first: "2026-06", last: "2026-06" }),
      whatsapp: registered(false, { business: false }),
      carrier: carrier("mobile", "Test Wireless", "US"),
      "signal.registered": registered(true),
      "number.hlr": hlr("reachable", { roaming: true }),
    },
  },
  {
    value: "+12025550104",
    kind: "number",
    summary: "recently offered as unassigned: spam medium (reason_unassigned), VoIP range, WhatsApp unknown, HLR invalid",
    answers: {
      "number.spam": spamAnswer({ level: "medium", score: 35, unassigned: true, voip: true, first: "2026-08", last: "2026-08" }),
      whatsapp: status("unknown"),
      carrier: carrier("voip", "Test VoIP", "US"),
      "signal.registered": status("unknown"),
      "number.hlr": hlr("invalid"),
    },
  },
  { value: "+12025550105", kind: "number", summary: "no source can answer: every check unknown (free)", answers: ALL_UNKNOWN },
  { value: "+12025550106", kind: "number", summary: "suppressed number: row reported as suppressed, no check runs (free)", rowStatus: "suppressed", answers: {} },
  {
    value: "+12025550107",
    kind: "number",
    summary: "slow sources: the lookup is pending (202) and completes 3 seconds after creation with the answers of +12025550100",
    pendingSeconds: 3,
    answers: CLEAN_NUMBER,
  },
  {
    value: "+12025550109",
    kind: "number",
    summary: "very slow sources: pending for 20 seconds, longer than the default wait, so POST answers 202; then the answers of +12025550100",
    pendingSeconds: 20,
    answers: CLEAN_NUMBER,
  },
  { value: "+12025550108", kind: "number", summary: "outage: the request fails with 503 temporarily_unavailable and Retry-After (not charged)", unavailable: true, answers: {} },
  {
    value: "+14165550100",
    kind: "number",
    summary: "Canada: spam high (regulator action), on WhatsApp",
    answers: {
      "number.spam": spamAnswer({ level: "high", score: 80, regulator: true, category: "fraud", first: "2025-11", last: "2026-10" }),
      whatsapp: registered(true, { business: false }),
      carrier: carrier("mobile", "Test Wireless CA", "CA"),
      "signal.registered": registered(false),
      "number.hlr": { ...hlr("reachable"), attributes: { ...hlr("reachable").attributes, country: "CA" } },
    },
  },
  {
    value: "+493023125000",
    kind: "number",
    summary: "Germany: no spam reports, fixed line, not on WhatsApp",
    answers: {
      "number.spam": spamAnswer({ level: "no_reports", score: 0 }),
      whatsapp: registered(false, { business: false }),
      carrier: carrier("fixed_line", "Test Festnetz", "DE"),
      "signal.registered": registered(false),
      "number.hlr": { ...hlr("reachable"), attributes: { ...hlr("reachable").attributes, country: "DE" } },
    },
  },
  {
    value: "+61491570156",
    kind: "number",
    summary: "Australia: number.spam is unsupported_country (free), on WhatsApp",
    answers: {
      "number.spam": status("unsupported_country"),
      whatsapp: registered(true, { business: false }),
      carrier: carrier("mobile", "Test Mobile AU", "AU"),
      "signal.registered": registered(true),
      "number.hlr": { ...hlr("reachable"), attributes: { ...hlr("reachable").attributes, country: "AU" } },
    },
  },
  { value: "+999123", kind: "number", summary: "invalid number: row reported as invalid, no check runs (free)", answers: {} },
  { value: `deliverable@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "mailbox exists", answers: DELIVERABLE },
  { value: `undeliverable@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "mailbox does not exist", answers: { email: mailbox(false) } },
  { value: `catchall@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "catch-all domain: registered null, catch_all true (conclusive)", answers: { email: mailbox(null, { catchAll: true }) } },
  { value: `disposable@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "mailbox exists on a disposable-address domain", answers: { email: mailbox(true, { disposable: true }) } },
  { value: `unknown@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "greylisted: status unknown (free)", answers: { email: status("unknown") } },
  { value: `suppressed@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "suppressed address: row reported as suppressed (free)", rowStatus: "suppressed", answers: {} },
  { value: `pending@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "slow mail server: the lookup is pending and completes 3 seconds after creation, mailbox exists", pendingSeconds: 3, answers: DELIVERABLE },
  { value: `outage@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "outage: the request fails with 503 temporarily_unavailable (not charged)", unavailable: true, answers: {} },
  { value: `invalid@@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "invalid address: row reported as invalid (free)", answers: {} },
];

const BY_VALUE = new Map(TEST_PROFILES.map((p) => [p.value, p]));

/**
 * The profile for a row, matched on the exact documented value or on its
 * normalised form (so `+1 202-555-0101` is the same test number).
 */
export function testProfileFor(row: Pick<PreparedRow, "input" | "e164" | "email">): TestProfile | undefined {
  return BY_VALUE.get(row.input.trim()) ?? (row.e164 ? BY_VALUE.get(row.e164) : undefined) ?? (row.email ? BY_VALUE.get(row.email.toLowerCase()) : undefined);
}

/** A documented test value: the only values the public sandbox key accepts, refused for live keys. */
export function isTestValue(row: Pick<PreparedRow, "kind" | "input" | "e164" | "email" | "domain">): boolean {
  if (testProfileFor(row)) return true;
  return row.kind === "email" && (row.domain ?? domainOf(row.input)) === TEST_EMAIL_DOMAIN;
}

function domainOf(input: string): string | null {
  const at = input.lastIndexOf("@");
  return at < 0 ? null : input.slice(at + 1).trim().toLowerCase();
}

/** Sandbox: only the documented values themselves, not any address at the test domain. */
export function isDocumentedTestValue(row: Pick<PreparedRow, "input" | "e164" | "email">): boolean {
  return testProfileFor(row) !== undefined;
}

const CATEGORIES = ["robocall", "telemarketing", "impersonation", "debt_collection", "fraud", "survey"];
const DISPOSABLE_DOMAINS = new Set(["mailinator.com", "guerrillamail.com", "10minutemail.com", "temp-mail.org", "yopmail.com", "trashmail.com"]);

/** Eight independent uniform numbers in [0, 1) from one SHA-256 of the seed (one hash per answer). */
function units(seed: string): (i: number) => number {
  const h = createHash("sha256").update(seed).digest();
  return (i) => h.readUInt32BE((i % 8) * 4) / 0x1_0000_0000;
}

function month(u: number): string {
  const m = Math.floor(u * 36); // 2023-11 .. 2026-10
  const year = 2023 + Math.floor((m + 10) / 12);
  return `${year}-${String(((m + 10) % 12) + 1).padStart(2, "0")}`;
}

/** Deterministic fake answer for a valid identifier that is not a documented test value. */
export function derivedAnswer(check: CheckCode, row: Pick<PreparedRow, "e164" | "email" | "domain" | "country" | "numberType">): Answer {
  const id = row.e164 ?? row.email ?? "";
  const unit = units(`${check}|${id.toLowerCase()}`);
  const u = unit(0);
  switch (check) {
    case "number.spam": {
      if (!coversCountry(check, row.country)) return status("unsupported_country");
      // Test data: the VoIP hint is derived like the rest (no line-type lookup per number).
      const voip = unit(5) < 0.05;
      const category = CATEGORIES[Math.floor(unit(1) * CATEGORIES.length)] as string;
      const [first, last] = [month(unit(2)), month(unit(3))].sort();
      if (u < 0.7) return spamAnswer({ level: "no_reports", score: 0, voip });
      if (u < 0.85) return spamAnswer({ level: "low", score: 5 + Math.floor(unit(4) * 25), community: true, voip, category, first, last });
      if (u < 0.95) return spamAnswer({ level: "medium", score: 30 + Math.floor(unit(4) * 40), government: true, voip, category, first, last });
      return spamAnswer({ level: "high", score: 70 + Math.floor(unit(4) * 31), government: true, community: true, voip, category, first, last });
    }
    case "whatsapp":
      if (u < 0.6) return registered(true, { business: unit(1) < 0.1 });
      if (u < 0.95) return registered(false, { business: false });
      return status("unknown");
    case "signal.registered":
      if (u < 0.35) return registered(true);
      if (u < 0.97) return registered(false);
      return status("unknown");
    case "carrier": {
      const type = row.numberType ?? (row.e164 ? numberTypeOf(row.e164) : undefined);
      const lineType = lineTypeName(type);
      const name = `Test Carrier ${"ABCDEFGH"[Math.floor(unit(1) * 8)]}`;
      return carrier(lineType, name, row.country);
    }
    case "number.hlr": {
      const answer = u < 0.8 ? hlr("reachable", { ported: unit(1) < 0.15, roaming: unit(2) < 0.05 }) : u < 0.95 ? hlr("unreachable") : status("unknown");
      if (answer.attributes && row.country) answer.attributes.country = row.country;
      return answer;
    }
    case "email": {
      const disposable = row.domain !== null && DISPOSABLE_DOMAINS.has(row.domain);
      if (u < 0.7) return mailbox(true, { disposable });
      if (u < 0.85) return mailbox(false, { disposable });
      if (u < 0.95) return mailbox(null, { catchAll: true, disposable });
      return status("unknown");
    }
  }
}
