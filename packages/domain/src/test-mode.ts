import { hash } from "node:crypto";
import { coversCountry, type CheckCode } from "./checks";
import { emailTraits } from "./email-traits";
import { lineTypeName, numberTypeOf } from "./phone";
import type { PreparedRow } from "./rows";
import type { Answer, CheckStatus, IdentifierStatus } from "./results";
import { scoreSpam, weighReportGroups, weighReports, type DatedReport, type DatedReportGroup, type SignalClass, type SpamEvidence } from "./spam-score";

/**
 * Test mode: fixed data, never billed, never reaches a data source. Documented test
 * values give fixed answers covering every outcome a client must handle; any other
 * valid identifier gets a deterministic fake answer derived from a hash of the
 * check and the identifier (same input, same answer, on every replica, forever).
 * The table below is the single source for docs/test-mode.md.
 */
export const TEST_EMAIL_DOMAIN = "example.com";

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

/** Test-mode spam answers are scored as of this day, from the reports below (fixed forever). */
export const TEST_MODE_SPAM_AS_OF = "2026-11-01";

/** `count` reports of one class on one day, with a category code (or none). */
type ReportGroup = readonly [signalClass: SignalClass, count: number, day: string, category?: string];

const dated = (groups: readonly ReportGroup[]): DatedReport[] =>
  groups.flatMap(([signalClass, count, day, category]) => Array.from({ length: count }, () => ({ signalClass, day, category: category ?? null })));

/** Reports as the store would hold them for one number, and whether its range is VoIP. */
export type TestSpamReports = { reports: readonly DatedReport[]; voip: boolean };

const none: TestSpamReports = { reports: [], voip: false };

/**
 * The reports behind each documented test number's spam answer. Test mode answers
 * `scoreSpam` of them weighed as of TEST_MODE_SPAM_AS_OF, exactly as live scoring would
 * (tests/spam imports them into the report store and compares), so a test-mode spam
 * answer is always one a live key can get.
 */
export const TEST_SPAM_REPORTS: Readonly<Record<string, TestSpamReports>> = {
  "+12025550100": none,
  // The pending numbers answer like +12025550100 once they complete.
  "+12025550107": none,
  "+12025550109": none,
  "+12025550101": {
    reports: dated([
      ["regulator", 1, "2024-03-15", "impersonation"], // over a year old: half weight, 38 points
      ["government", 12, "2026-06-20", "robocall"], // over 90 days: each counts half
      ["government", 24, "2026-10-12", "impersonation"], // 30 reports' worth: 40 points (the cap)
      ["community", 4, "2026-10-20", "impersonation"], // 16 points
    ]),
    voip: true,
  },
  "+12025550102": {
    reports: dated([
      ["government", 6, "2025-01-20", "telemarketing"], // 1 to 3 years: each counts a quarter
      ["government", 20, "2026-06-10", "telemarketing"], // 90 days to a year: each counts half
      ["government", 8, "2026-09-15", "telemarketing"], // 19.5 reports' worth: 36 points
    ]),
    voip: false,
  },
  "+12025550103": { reports: dated([["community", 1, "2026-10-14", "robocall"]]), voip: false },
  "+12025550104": { reports: dated([["unassigned", 1, "2026-08-20"]]), voip: true },
  "+14165550100": {
    reports: dated([
      ["regulator", 1, "2025-11-14", "fraud"],
      ["regulator", 1, "2026-10-05", "fraud"],
    ]),
    voip: false,
  },
  "+493023125000": none,
};

/** The evidence test mode scores for each documented number (TEST_SPAM_REPORTS, weighed). */
export const TEST_SPAM_EVIDENCE: Readonly<Record<string, SpamEvidence>> = Object.fromEntries(
  Object.entries(TEST_SPAM_REPORTS).map(([value, r]) => [value, weighReports(r.reports, TEST_MODE_SPAM_AS_OF, r.voip)]),
);

const spamOf = (value: keyof typeof TEST_SPAM_EVIDENCE): Answer => scoreSpam(TEST_SPAM_EVIDENCE[value] as SpamEvidence);

const registered = (yes: boolean, attributes: Record<string, unknown> | null = null): Answer => ({
  status: "ok",
  registered: yes,
  attributes,
});
const status = (s: CheckStatus): Answer => ({ status: s, registered: null, attributes: null });
const carrier = (lineType: string, name: string | null, country: string | null): Answer => ({
  status: "ok",
  registered: null,
  // Like the live source: a named carrier is the block's original allocation.
  attributes: { line_type: lineType, carrier: name, country, carrier_source: name ? "allocation" : null },
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
type MailboxExtra = { catchAll?: boolean; disposable?: boolean; mxFound?: boolean; role?: boolean; free?: boolean; didYouMean?: string | null };
const mailbox = (exists: boolean | null, extra: MailboxExtra = {}): Answer => ({
  status: "ok",
  registered: exists,
  attributes: {
    catch_all: Boolean(extra.catchAll),
    disposable: Boolean(extra.disposable),
    mx_found: extra.mxFound ?? true,
    role_account: Boolean(extra.role),
    free_provider: Boolean(extra.free),
    did_you_mean: extra.didYouMean ?? null,
  },
});

const CLEAN_NUMBER: Partial<Record<CheckCode, Answer>> = {
  "number.spam": spamOf("+12025550100"),
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
      "number.spam": spamOf("+12025550101"),
      whatsapp: registered(false, { business: false }),
      carrier: carrier("voip", "Test VoIP", "US"),
      "signal.registered": registered(false),
      "number.hlr": hlr("unreachable"),
    },
  },
  {
    value: "+12025550102",
    kind: "number",
    summary: "telemarketer: spam medium (government complaints, older ones counting less: 36 points), WhatsApp Business, fixed line, ported",
    answers: {
      "number.spam": spamOf("+12025550102"),
      whatsapp: registered(true, { business: true }),
      carrier: carrier("fixed_line", "Test Telecom", "US"),
      "signal.registered": registered(false),
      "number.hlr": hlr("reachable", { ported: true }),
    },
  },
  {
    value: "+12025550103",
    kind: "number",
    summary: "single community report: spam low (8 points), not on WhatsApp, roaming",
    answers: {
      "number.spam": spamOf("+12025550103"),
      whatsapp: registered(false, { business: false }),
      carrier: carrier("mobile", "Test Wireless", "US"),
      "signal.registered": registered(true),
      "number.hlr": hlr("reachable", { roaming: true }),
    },
  },
  {
    value: "+12025550104",
    kind: "number",
    summary: "recently offered as unassigned: spam low (reason_unassigned, 20 points), VoIP range, WhatsApp unknown, HLR invalid",
    answers: {
      "number.spam": spamOf("+12025550104"),
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
    summary: "Canada: spam high (regulator actions: 75 points), on WhatsApp",
    answers: {
      "number.spam": spamOf("+14165550100"),
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
      "number.spam": spamOf("+493023125000"),
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
  { value: `info@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "role account: mailbox exists, role_account true", answers: { email: mailbox(true, { role: true }) } },
  { value: `free@${TEST_EMAIL_DOMAIN}`, kind: "email", summary: "mailbox exists at a free mail provider: free_provider true", answers: { email: mailbox(true, { free: true }) } },
  {
    value: `typo@${TEST_EMAIL_DOMAIN}`,
    kind: "email",
    summary: "mistyped domain that receives no mail: registered false, mx_found false, did_you_mean gmail.com (conclusive)",
    answers: { email: mailbox(false, { mxFound: false, didYouMean: "gmail.com" }) },
  },
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

/**
 * Eight independent uniform numbers in [0, 1) from one SHA-256 of the seed (one hash per
 * answer): its eight big-endian 32-bit words. One-shot hex is the cheapest form of the
 * digest node gives (no Hash object, no Buffer; a 50,000-row job hashes once a row).
 */
function units(seed: string): (i: number) => number {
  const h = hash("sha256", seed, "hex");
  return (i) => parseInt(h.slice((i % 8) * 8, (i % 8) * 8 + 8), 16) / 0x1_0000_0000;
}

const AS_OF_MS = Date.parse(`${TEST_MODE_SPAM_AS_OF}T00:00:00Z`);
/** The 1,000 days dayBefore can give, each formatted once. */
const DAYS_BEFORE: string[] = [];

/** A day at most 999 days before TEST_MODE_SPAM_AS_OF: inside the three-year horizon. */
function dayBefore(u: number): string {
  const days = Math.floor(u * 1_000);
  return (DAYS_BEFORE[days] ??= new Date(AS_OF_MS - days * 86_400_000).toISOString().slice(0, 10));
}

/**
 * Deterministic fake reports for a number that is not a documented test value: 70% none,
 * then a few community reports, government complaints (sometimes with an unassigned
 * offer), or a regulator action with complaints and reports. The answer is `scoreSpam`
 * of them, so it is always one that live scoring gives for the same reports.
 */
export function derivedSpamReports(row: Pick<PreparedRow, "e164" | "email">): TestSpamReports {
  const { groups, voip } = derivedSpamGroups(row);
  return { reports: dated(groups), voip };
}

const NO_GROUPS: readonly ReportGroup[] = [];

/** derivedSpamReports before its groups are expanded into single reports. */
function derivedSpamGroups(row: Pick<PreparedRow, "e164" | "email">): { groups: readonly ReportGroup[]; voip: boolean } {
  const unit = units(`number.spam|${(row.e164 ?? row.email ?? "").toLowerCase()}`);
  const u = unit(0);
  // Test data: the VoIP hint is derived like the rest (no line-type lookup per number).
  const voip = unit(5) < 0.05;
  if (u < 0.7) return { groups: NO_GROUPS, voip };
  const category = CATEGORIES[Math.floor(unit(1) * CATEGORIES.length)] as string;
  const [older, newer] = [dayBefore(unit(2)), dayBefore(unit(3))].sort() as [string, string];
  const n = unit(4);
  const groups: ReportGroup[] = [];
  if (u < 0.85) {
    const reports = 1 + Math.floor(n * 4);
    groups.push(["community", 1, older, category], ["community", reports - 1, newer, category]);
  } else if (u < 0.95) {
    const reports = 2 + Math.floor(n * 40);
    groups.push(["government", Math.floor(reports / 2), older, category], ["government", Math.ceil(reports / 2), newer, category]);
    if (unit(6) < 0.3) groups.push(["unassigned", 1, dayBefore(unit(7) * 0.09)]);
  } else {
    groups.push(["regulator", 1, newer, category], ["government", 5 + Math.floor(n * 60), newer, category], ["community", 2 + Math.floor(unit(6) * 30), older, category]);
  }
  return { groups, voip };
}

/**
 * The evidence test mode scores for a number that is not a documented test value:
 * `weighReports(derivedSpamReports(row))`, weighed per group of reports rather than per report.
 */
export function derivedSpamEvidence(row: Pick<PreparedRow, "e164" | "email">): SpamEvidence {
  const { groups, voip } = derivedSpamGroups(row);
  return weighReportGroups(
    groups.map(([signalClass, count, day, category]): DatedReportGroup => ({ signalClass, day, category: category ?? null, count })),
    TEST_MODE_SPAM_AS_OF,
    voip,
  );
}

/** Deterministic fake answer for a valid identifier that is not a documented test value. */
export function derivedAnswer(check: CheckCode, row: Pick<PreparedRow, "e164" | "email" | "domain" | "country" | "numberType">): Answer {
  // number.spam hashes its own seed (derivedSpamReports); the others share this one.
  if (check === "number.spam") return coversCountry(check, row.country) ? scoreSpam(derivedSpamEvidence(row)) : status("unsupported_country");
  const id = row.e164 ?? row.email ?? "";
  const unit = units(`${check}|${id.toLowerCase()}`);
  const u = unit(0);
  switch (check) {
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
      // The live rules on the address itself; every derived answer has a mail host (mx_found true).
      const at = id.lastIndexOf("@");
      const traits = emailTraits(id.slice(0, at), row.domain ?? id.slice(at + 1), true);
      const extra = { disposable, role: traits.role_account, free: traits.free_provider, didYouMean: traits.did_you_mean };
      if (u < 0.7) return mailbox(true, extra);
      if (u < 0.85) return mailbox(false, extra);
      if (u < 0.95) return mailbox(null, { ...extra, catchAll: true });
      return status("unknown");
    }
  }
}
