import { CHECK_CODES, checkDef, type CheckCode } from "./checks";
import { parseEmail } from "./email";
import { roleAccount } from "./email-traits";
import { numberTypeOf, parseNumber } from "./phone";
import type { CheckResult } from "./results";
import { prepareRows, type PreparedRow } from "./rows";
import { scoreSpam, weighReports, type SpamEvidence } from "./spam-score";
import { answerTestRows, rowFromStored } from "./test-lookup";
import {
  TEST_EMAIL_DOMAIN,
  TEST_PROFILES,
  derivedAnswer,
  isDocumentedTestValue,
  isTestValue,
  TEST_SPAM_EVIDENCE,
  derivedSpamEvidence,
  derivedSpamReports,
  TEST_MODE_SPAM_AS_OF,
  testProfileFor,
  type Answer,
} from "./test-mode";

const NUMBER_CHECKS = CHECK_CODES.filter((c) => checkDef(c).input === "number");
const ALL_CHECKS: CheckCode[] = [...CHECK_CODES];
const NOW = new Date("2026-11-02T10:20:30.000Z");

const numberProfiles = TEST_PROFILES.filter((p) => p.kind === "number");
const emailProfiles = TEST_PROFILES.filter((p) => p.kind === "email");
const profile = (value: string) => {
  const found = TEST_PROFILES.find((p) => p.value === value);
  if (!found) throw new Error(`no profile ${value}`);
  return found;
};
const allAnswers = (): Array<[CheckCode, Answer]> => TEST_PROFILES.flatMap((p) => Object.entries(p.answers) as Array<[CheckCode, Answer]>);
const allRows = () =>
  prepareRows(
    numberProfiles.map((p) => p.value),
    emailProfiles.map((p) => p.value),
  );

/** A fresh US number that is not a documented test value. */
function usNumber(i: number): PreparedRow {
  const row = prepareRows([`+1212555${String(2000 + i)}`], [])[0] as PreparedRow;
  expect(row.status).toBe("valid");
  return row;
}

describe("TEST_PROFILES", () => {
  it("has one profile per value", () => {
    expect(new Set(TEST_PROFILES.map((p) => p.value)).size).toBe(TEST_PROFILES.length);
  });

  it("uses only valid numbers, except the documented invalid one", () => {
    const invalid = numberProfiles.filter((p) => !parseNumber(p.value).valid).map((p) => p.value);
    expect(invalid).toEqual(["+999123"]);
    for (const p of numberProfiles.filter((x) => x.value !== "+999123")) {
      const parsed = parseNumber(p.value);
      expect(parsed).toMatchObject({ valid: true, e164: p.value });
    }
  });

  it("uses only valid addresses at the test domain, except the documented invalid one", () => {
    for (const p of emailProfiles) expect(p.value.endsWith(`@${TEST_EMAIL_DOMAIN}`)).toBe(true);
    expect(emailProfiles.filter((p) => !parseEmail(p.value).valid).map((p) => p.value)).toEqual([`invalid@@${TEST_EMAIL_DOMAIN}`]);
  });

  it("gives every answering profile a fixed answer for every check of its kind", () => {
    for (const p of TEST_PROFILES) {
      expect(p.summary.length).toBeGreaterThan(10);
      if (Object.keys(p.answers).length === 0) continue;
      for (const code of CHECK_CODES.filter((c) => checkDef(c).input === p.kind)) expect([p.value, code, p.answers[code]?.status]).toEqual([p.value, code, expect.any(String)]);
    }
  });

  it("answers with exactly the attributes the catalog lists for each check, like live answers", () => {
    for (const [code, answer] of allAnswers()) {
      if (answer.attributes === null) continue;
      expect([code, Object.keys(answer.attributes).sort()]).toEqual([code, checkDef(code).attributes.map((a) => a.name).sort()]);
    }
  });

  it("covers every spam risk level", () => {
    const levels = new Set(allAnswers().filter(([c, a]) => c === "number.spam" && a.status === "ok").map(([, a]) => a.attributes?.risk_level));
    expect([...levels].sort()).toEqual(["high", "low", "medium", "no_reports"]);
  });

  it("covers unknown and unsupported_country answers", () => {
    const statuses = new Set(allAnswers().map(([, a]) => a.status));
    expect(statuses).toContain("unknown");
    expect(statuses).toContain("unsupported_country");
    expect(allAnswers().some(([c, a]) => c === "email" && a.status === "unknown")).toBe(true);
    expect(allAnswers().some(([c, a]) => c === "number.spam" && a.status === "unsupported_country")).toBe(true);
  });

  it("covers suppressed, pending and unavailable for both numbers and e-mails", () => {
    for (const list of [numberProfiles, emailProfiles]) {
      expect(list.some((p) => p.rowStatus === "suppressed")).toBe(true);
      expect(list.some((p) => (p.pendingSeconds ?? 0) > 0)).toBe(true);
      expect(list.some((p) => p.unavailable === true)).toBe(true);
    }
  });

  it("covers e-mail registered true, false and null (catch-all)", () => {
    const registered = emailProfiles.flatMap((p) => (p.answers.email?.status === "ok" ? [p.answers.email.registered] : []));
    expect(registered).toEqual(expect.arrayContaining([true, false, null]));
    expect(profile(`catchall@${TEST_EMAIL_DOMAIN}`).answers.email?.attributes?.catch_all).toBe(true);
    expect(profile(`disposable@${TEST_EMAIL_DOMAIN}`).answers.email?.attributes?.disposable).toBe(true);
  });

  it("covers role accounts, free providers and typo suggestions, each role answer as the live rule gives it", () => {
    expect(profile(`info@${TEST_EMAIL_DOMAIN}`).answers.email?.attributes).toMatchObject({ role_account: true, free_provider: false, did_you_mean: null });
    expect(profile(`free@${TEST_EMAIL_DOMAIN}`).answers.email?.attributes).toMatchObject({ role_account: false, free_provider: true, did_you_mean: null });
    expect(profile(`typo@${TEST_EMAIL_DOMAIN}`).answers.email).toEqual({
      status: "ok",
      registered: false,
      attributes: { catch_all: false, disposable: false, mx_found: false, role_account: false, free_provider: false, did_you_mean: "gmail.com" },
    });
    for (const p of emailProfiles) {
      const attributes = p.answers.email?.attributes;
      const parsed = parseEmail(p.value);
      if (attributes && parsed.valid) expect([p.value, attributes.role_account]).toEqual([p.value, roleAccount(parsed.local)]);
    }
  });

  it("derives role, free provider and known-misspelling answers for other addresses with the live rules (a mail host always found)", () => {
    const [info, gmail, gmial, nomx] = prepareRows([], ["Info+news@shop.example.org", "someone@gmail.com", "someone@gmial.com", "someone@gmaik.com"]) as PreparedRow[];
    const attrs = (row: PreparedRow | undefined) => derivedAnswer("email", row as PreparedRow).attributes;
    expect(attrs(info)).toMatchObject({ role_account: true, free_provider: false, did_you_mean: null });
    expect(attrs(gmail)).toMatchObject({ role_account: false, free_provider: true, did_you_mean: null });
    expect(attrs(gmial)).toMatchObject({ free_provider: false, did_you_mean: "gmail.com", mx_found: true });
    // Not a known misspelling, and test mode always finds a mail host: no suggestion.
    expect(attrs(nomx)).toMatchObject({ did_you_mean: null, mx_found: true });
  });

  it("covers WhatsApp registered, not registered and Business accounts", () => {
    const whatsapp = numberProfiles.flatMap((p) => (p.answers.whatsapp ? [p.answers.whatsapp] : []));
    expect(whatsapp.some((a) => a.registered === true && a.attributes?.business === true)).toBe(true);
    expect(whatsapp.some((a) => a.registered === true && a.attributes?.business === false)).toBe(true);
    expect(whatsapp.some((a) => a.registered === false)).toBe(true);
  });

  it("gives spam answers that follow the documented rules", () => {
    for (const [code, a] of allAnswers()) {
      if (code !== "number.spam" || a.status !== "ok") continue;
      const attrs = a.attributes as Record<string, unknown>;
      const reasons = ["reason_regulator", "reason_government", "reason_community", "reason_unassigned"].filter((r) => attrs[r] === true).length;
      expect(attrs.sources).toBe(reasons);
      expect(attrs.risk_score).toEqual(expect.any(Number));
      expect(attrs.risk_score as number).toBeGreaterThanOrEqual(0);
      expect(attrs.risk_score as number).toBeLessThanOrEqual(100);
      if (attrs.risk_level === "high") expect(attrs.reason_regulator === true || reasons >= 2).toBe(true);
      if (attrs.risk_level === "no_reports") expect(attrs).toMatchObject({ risk_score: 0, sources: 0, first_seen: null, last_seen: null });
      for (const k of ["first_seen", "last_seen"]) if (attrs[k] !== null) expect(attrs[k]).toMatch(/^\d{4}-(0[1-9]|1[0-2])$/);
    }
  });

  it("gives spam answers for US, CA and DE test numbers only", () => {
    for (const p of numberProfiles) {
      const spam = p.answers["number.spam"];
      const parsed = parseNumber(p.value);
      if (!spam || spam.status !== "ok" || !parsed.valid) continue;
      expect(["US", "CA", "DE"]).toContain(parsed.country);
    }
    expect(profile("+61491570156").answers["number.spam"]?.status).toBe("unsupported_country");
  });
});

/** The most one class can score on its own in live scoring (regulator 75, government 40, community 35, unassigned 20). */
const SINGLE_CLASS_MAX: Record<string, number> = { reason_regulator: 75, reason_government: 40, reason_community: 35, reason_unassigned: 20 };

/** What live scoring can never answer, whatever the reports (issue 13: 35 for unassigned alone, 45 for government alone). */
function expectLiveScoringCouldAnswer(a: Answer): void {
  const attrs = a.attributes as Record<string, unknown>;
  const reasons = Object.keys(SINGLE_CLASS_MAX).filter((r) => attrs[r] === true);
  if (reasons.length === 1) expect(attrs.risk_score as number).toBeLessThanOrEqual(SINGLE_CLASS_MAX[reasons[0] as string] as number);
  if (reasons.length === 1 && !attrs.reason_regulator) expect(attrs.risk_level).not.toBe("high");
}

describe("test-mode spam answers come from live scoring", () => {
  const spamProfiles = numberProfiles.filter((p) => p.answers["number.spam"]?.status === "ok");

  it("answers every documented test number with scoreSpam of its fixed evidence", () => {
    expect(spamProfiles.length).toBeGreaterThanOrEqual(7);
    for (const p of spamProfiles) {
      const evidence = TEST_SPAM_EVIDENCE[p.value];
      expect([p.value, evidence === undefined]).toEqual([p.value, false]);
      expect(p.answers["number.spam"]).toEqual(scoreSpam(evidence as SpamEvidence));
      expectLiveScoringCouldAnswer(p.answers["number.spam"] as Answer);
    }
    // The pending numbers answer like the clean one.
    expect(profile("+12025550107").answers["number.spam"]).toEqual(profile("+12025550100").answers["number.spam"]);
  });

  it("scores the unassigned-only and government-only numbers within live scoring's caps", () => {
    expect(profile("+12025550104").answers["number.spam"]?.attributes).toMatchObject({
      risk_level: "low",
      risk_score: 20,
      reason_unassigned: true,
      reason_government: false,
      voip_range: true,
      first_seen: "2026-08",
      last_seen: "2026-08",
      sources: 1,
    });
    expect(profile("+12025550102").answers["number.spam"]?.attributes).toMatchObject({
      risk_level: "medium",
      risk_score: 36,
      reason_government: true,
      sources: 1,
      top_category: "telemarketing",
      first_seen: "2025-01",
      last_seen: "2026-09",
    });
    expect(profile("+12025550101").answers["number.spam"]?.attributes).toMatchObject({ risk_level: "high", risk_score: 94, top_category: "impersonation", first_seen: "2024-03", last_seen: "2026-10", sources: 3 });
    expect(profile("+14165550100").answers["number.spam"]?.attributes).toMatchObject({ risk_level: "high", risk_score: 75, sources: 1, first_seen: "2025-11", last_seen: "2026-10" });
    expect(profile("+12025550103").answers["number.spam"]?.attributes).toMatchObject({ risk_level: "low", risk_score: 8, sources: 1 });
  });

  it("weighs derived reports per group exactly as report by report (same evidence, key order included)", () => {
    let withReports = 0;
    for (let i = 0; i < 3_000; i += 1) {
      const row = usNumber(i);
      const { reports, voip } = derivedSpamReports(row);
      if (reports.length > 0) withReports += 1;
      const grouped = derivedSpamEvidence(row);
      const single = weighReports(reports, TEST_MODE_SPAM_AS_OF, voip);
      expect(grouped).toEqual(single);
      expect(Object.keys(grouped.classes)).toEqual(Object.keys(single.classes));
    }
    expect(withReports).toBeGreaterThan(500);
  });

  it("answers every other number with scoreSpam of its derived evidence", () => {
    for (let i = 0; i < 300; i += 1) {
      const row = usNumber(i);
      const answer = derivedAnswer("number.spam", row);
      expect(answer).toEqual(scoreSpam(derivedSpamEvidence(row)));
      expectLiveScoringCouldAnswer(answer);
    }
  });
});

describe("testProfileFor, isTestValue and isDocumentedTestValue", () => {
  it("matches a test number however it is written", () => {
    for (const input of ["+12025550101", " +12025550101 ", "+1 202-555-0101", "+1 (202) 555-0101", "0012025550101", "12025550101"]) {
      const row = prepareRows([input], [])[0] as PreparedRow;
      expect(testProfileFor(row)?.value).toBe("+12025550101");
      expect(isDocumentedTestValue(row)).toBe(true);
      expect(isTestValue(row)).toBe(true);
    }
  });

  it("matches a test address in any letter case", () => {
    const row = prepareRows([], ["Deliverable@EXAMPLE.com"])[0] as PreparedRow;
    expect(testProfileFor(row)?.value).toBe(`deliverable@${TEST_EMAIL_DOMAIN}`);
  });

  it("matches the documented invalid values by their exact text", () => {
    const [n, e] = prepareRows(["+999123"], [`invalid@@${TEST_EMAIL_DOMAIN}`]) as [PreparedRow, PreparedRow];
    expect(n.status).toBe("invalid");
    expect(e.status).toBe("invalid");
    expect(isDocumentedTestValue(n)).toBe(true);
    expect(isDocumentedTestValue(e)).toBe(true);
  });

  it("treats any address at the test domain as a test value, but only documented ones as documented", () => {
    const [any, bad] = prepareRows([], [`someone@${TEST_EMAIL_DOMAIN}`, `broken @${TEST_EMAIL_DOMAIN.toUpperCase()}`]) as [PreparedRow, PreparedRow];
    expect(isTestValue(any)).toBe(true);
    expect(isDocumentedTestValue(any)).toBe(false);
    expect(bad.status).toBe("invalid");
    expect(isTestValue(bad)).toBe(true);
  });

  it("does not treat ordinary numbers and addresses as test values", () => {
    const [n, e] = prepareRows(["+12125552000"], ["someone@example.org"]) as [PreparedRow, PreparedRow];
    expect(testProfileFor(n)).toBeUndefined();
    expect(isTestValue(n)).toBe(false);
    expect(isTestValue(e)).toBe(false);
    expect(isDocumentedTestValue(e)).toBe(false);
  });
});

describe("derivedAnswer", () => {
  it("gives the same answer for the same identifier on every call", () => {
    for (let i = 0; i < 50; i += 1) {
      const row = usNumber(i);
      for (const check of NUMBER_CHECKS) expect(derivedAnswer(check, row)).toEqual(derivedAnswer(check, { ...row }));
    }
    const email = prepareRows([], ["someone@example.org"])[0] as PreparedRow;
    const upper = prepareRows([], ["SOMEONE@example.org"])[0] as PreparedRow;
    expect(derivedAnswer("email", upper)).toEqual(derivedAnswer("email", email));
  });

  it("gives different identifiers different answers", () => {
    const scores = new Set(Array.from({ length: 100 }, (_, i) => JSON.stringify(derivedAnswer("number.spam", usNumber(i)))));
    expect(scores.size).toBeGreaterThan(5);
  });

  it("gives number.spam unsupported_country outside US, CA and DE", () => {
    for (const n of ["+442071838750", "+33123456789", "+61491570157", "+4915112345678", "+14165552000", "+12125552000"]) {
      const row = prepareRows([n], [])[0] as PreparedRow;
      expect(row.status).toBe("valid");
      const answer = derivedAnswer("number.spam", row);
      if (["US", "CA", "DE"].includes(row.country as string)) expect(answer.status).toBe("ok");
      else expect(answer).toEqual({ status: "unsupported_country", registered: null, attributes: null });
    }
    expect(derivedAnswer("number.spam", { ...usNumber(1), country: null }).status).toBe("unsupported_country");
  });

  it("derives spam answers within the documented ranges", () => {
    const levels = new Set<unknown>();
    for (let i = 0; i < 300; i += 1) {
      const a = derivedAnswer("number.spam", usNumber(i));
      const attrs = a.attributes as Record<string, unknown>;
      levels.add(attrs.risk_level);
      expect(a.status).toBe("ok");
      expect(a.registered).toBe(attrs.risk_level !== "no_reports");
      expect(attrs.risk_score as number).toBeGreaterThanOrEqual(0);
      expect(attrs.risk_score as number).toBeLessThanOrEqual(100);
      if (attrs.risk_level === "high") expect(attrs.sources as number).toBeGreaterThanOrEqual(2);
      if (attrs.first_seen !== null) {
        expect(attrs.first_seen).toMatch(/^20(2[3-6])-(0[1-9]|1[0-2])$/);
        expect(attrs.first_seen as string <= (attrs.last_seen as string)).toBe(true);
      }
    }
    expect(levels).toEqual(new Set(["no_reports", "low", "medium", "high"]));
  });

  it("only marks registered WhatsApp accounts as business", () => {
    for (let i = 0; i < 200; i += 1) {
      const a = derivedAnswer("whatsapp", usNumber(i));
      if (a.attributes?.business === true) expect(a.registered).toBe(true);
    }
  });

  it("reports the row's line type and country in carrier answers", () => {
    const de = prepareRows(["+4915112345678"], [])[0] as PreparedRow;
    expect(derivedAnswer("carrier", de)).toMatchObject({ status: "ok", attributes: { line_type: "mobile", country: "DE" } });
    // Without a precomputed type the line type is looked up from the number itself.
    expect(derivedAnswer("carrier", { ...de, numberType: undefined }).attributes?.line_type).toBe("mobile");
    expect(derivedAnswer("carrier", { ...de, numberType: "FIXED_LINE" }).attributes?.line_type).toBe("fixed_line");
    const hlr = ["+4915112345678", "+4915112345679", "+4915112345670"].map((n) => derivedAnswer("number.hlr", prepareRows([n], [])[0] as PreparedRow));
    const answered = hlr.filter((a) => a.attributes !== null);
    expect(answered.length).toBeGreaterThan(0);
    for (const a of answered) expect(a.attributes?.country).toBe("DE");
  });

  it("marks disposable e-mail domains", () => {
    const answers = (domain: string) =>
      prepareRows([], ["ann", "bob", "cy", "dee", "eve"].map((l) => `${l}@${domain}`)).map((r) => derivedAnswer("email", r)).filter((a) => a.status === "ok");
    expect(answers("mailinator.com").length).toBeGreaterThan(0);
    for (const a of answers("mailinator.com")) expect(a.attributes?.disposable).toBe(true);
    expect(answers("example.org").length).toBeGreaterThan(0);
    for (const a of answers("example.org")) expect(a.attributes?.disposable).toBe(false);
  });
});

describe("answerTestRows", () => {
  const byInput = (rows: ReturnType<typeof answerTestRows>["rows"], input: string) => {
    const row = rows.find((r) => r.input === input);
    if (!row) throw new Error(`no row ${input}`);
    return row;
  };
  const check = (checks: CheckResult[], service: CheckCode) => checks.find((c) => c.service === service) as CheckResult;

  it("runs every check for every identifier of its input type, numbers first", () => {
    const rows = prepareRows(["+12025550100", "+12125552000"], [`deliverable@${TEST_EMAIL_DOMAIN}`, "someone@example.org"]);
    const { rows: out } = answerTestRows(rows, ["email", "number.spam", "whatsapp"], NOW, false);
    expect(out.map((r) => [r.row_no, r.kind])).toEqual([
      [1, "number"],
      [2, "number"],
      [3, "email"],
      [4, "email"],
    ]);
    for (const r of out) {
      expect(r.checks.map((c) => c.service)).toEqual(r.kind === "number" ? ["number.spam", "whatsapp"] : ["email"]);
    }
  });

  it("gives documented answers for test values, never billed or cached", () => {
    const { rows: out, pendingSeconds, unavailable } = answerTestRows(allRows(), ALL_CHECKS, NOW, true);
    expect(unavailable).toBe(true);
    expect(pendingSeconds).toBe(20); // the slowest documented pending value (+12025550109)
    for (const r of out) for (const c of r.checks) expect(c).toMatchObject({ billed: false, cached: false });

    const scam = byInput(out, "+12025550101");
    expect(check(scam.checks, "number.spam")).toMatchObject({ status: "ok", registered: true, checked_at: NOW.toISOString(), attributes: { risk_level: "high" } });
    expect(check(scam.checks, "whatsapp").registered).toBe(false);
    expect(check(byInput(out, "+12025550102").checks, "whatsapp").attributes).toEqual({ business: true });
    expect(byInput(out, "+12025550105").checks.every((c) => c.status === "unknown")).toBe(true);
    expect(check(byInput(out, "+61491570156").checks, "number.spam").status).toBe("unsupported_country");
    expect(check(byInput(out, `catchall@${TEST_EMAIL_DOMAIN}`).checks, "email")).toMatchObject({ status: "ok", registered: null });
    expect(check(byInput(out, `undeliverable@${TEST_EMAIL_DOMAIN}`).checks, "email")).toMatchObject({ status: "ok", registered: false });
  });

  it("reports invalid and suppressed rows without running checks", () => {
    const { rows: out } = answerTestRows(allRows(), ALL_CHECKS, NOW, true);
    for (const [input, status] of [
      ["+999123", "invalid"],
      [`invalid@@${TEST_EMAIL_DOMAIN}`, "invalid"],
      ["+12025550106", "suppressed"],
      [`suppressed@${TEST_EMAIL_DOMAIN}`, "suppressed"],
    ] as const) {
      const row = byInput(out, input);
      expect(row.kind === "number" ? row.number_status : row.email_status).toBe(status);
      expect(row.checks.length).toBeGreaterThan(0);
      for (const c of row.checks) expect(c).toEqual({ service: c.service, status, registered: null, attributes: null, cached: false, billed: false, checked_at: null });
    }
  });

  it("reports duplicates without running checks", () => {
    const rows = prepareRows(["+12025550101", "+1 202 555 0101"], []);
    const { rows: out } = answerTestRows(rows, ["number.spam"], NOW, true);
    expect(out[0]?.checks[0]?.status).toBe("ok");
    expect(out[1]?.number_status).toBe("duplicate");
    expect(out[1]?.checks[0]).toMatchObject({ status: "duplicate", billed: false, checked_at: null });
  });

  it("keeps pending test values pending until settled, then gives their final answers", () => {
    const rows = prepareRows(["+12025550107", "+12025550100"], [`pending@${TEST_EMAIL_DOMAIN}`]);
    const first = answerTestRows(rows, ["number.spam", "whatsapp", "email"], NOW, false);
    expect(first.pendingSeconds).toBe(3);
    expect(byInput(first.rows, "+12025550107").checks.map((c) => c.status)).toEqual(["pending", "pending"]);
    expect(byInput(first.rows, `pending@${TEST_EMAIL_DOMAIN}`).checks.map((c) => c.status)).toEqual(["pending"]);
    for (const c of byInput(first.rows, "+12025550107").checks) expect(c).toMatchObject({ registered: null, attributes: null, checked_at: null });
    expect(byInput(first.rows, "+12025550100").checks.every((c) => c.status === "ok")).toBe(true);

    const later = new Date(NOW.getTime() + 3000);
    const settled = answerTestRows(rows, ["number.spam", "whatsapp", "email"], later, true);
    const slow = byInput(settled.rows, "+12025550107").checks;
    const clean = byInput(settled.rows, "+12025550100").checks;
    expect(slow.map((c) => c.status)).toEqual(["ok", "ok"]);
    expect(slow.map((c) => [c.registered, c.attributes])).toEqual(clean.map((c) => [c.registered, c.attributes]));
    expect(slow[0]?.checked_at).toBe(later.toISOString());
    expect(check(byInput(settled.rows, `pending@${TEST_EMAIL_DOMAIN}`).checks, "email")).toMatchObject({ status: "ok", registered: true });
  });

  it("completes at once and is available when no slow or outage value is present", () => {
    const result = answerTestRows(prepareRows(["+12025550100", "+12125552000"], ["someone@example.org"]), ALL_CHECKS, NOW, false);
    expect(result.pendingSeconds).toBe(0);
    expect(result.unavailable).toBe(false);
  });

  it("flags the outage values", () => {
    expect(answerTestRows(prepareRows(["+12025550108"], []), ["number.spam"], NOW, false).unavailable).toBe(true);
    expect(answerTestRows(prepareRows([], [`outage@${TEST_EMAIL_DOMAIN}`]), ["email"], NOW, false).unavailable).toBe(true);
  });

  it("gives identical answers on every call", () => {
    const rows = prepareRows(["+12125552000", "+442071838750", "+12025550103"], ["someone@example.org"]);
    expect(answerTestRows(rows, ALL_CHECKS, NOW, true)).toEqual(answerTestRows(rows, ALL_CHECKS, NOW, true));
  });

  it("hands out copies, so changing one response never changes the next", () => {
    const rows = prepareRows(["+12025550101"], []);
    const first = answerTestRows(rows, ["number.spam"], NOW, true);
    (first.rows[0]?.checks[0]?.attributes as Record<string, unknown>).risk_level = "tampered";
    expect(answerTestRows(rows, ["number.spam"], NOW, true).rows[0]?.checks[0]?.attributes?.risk_level).toBe("high");
    expect(profile("+12025550101").answers["number.spam"]?.attributes?.risk_level).toBe("high");
  });
});

describe("rowFromStored", () => {
  const rows = prepareRows(
    [...numberProfiles.map((p) => p.value), "+1 212 555 2000", "+4915112345678", "+12025550100"],
    [...emailProfiles.map((p) => p.value), "Someone@Example.ORG", "x@mailinator.com"],
  );
  const stored = rows.map((r) => ({ row_no: r.rowNo, kind: r.kind, e164: r.e164, email: r.email, status: r.status }));

  it("rebuilds the parsed fields of every row", () => {
    stored.forEach((s, i) => {
      const original = rows[i] as PreparedRow;
      const rebuilt = rowFromStored(s);
      expect(rebuilt).toMatchObject({
        rowNo: original.rowNo,
        kind: original.kind,
        status: original.status,
        e164: original.e164,
        country: original.country,
        numberType: original.e164 ? numberTypeOf(original.e164) : undefined,
        email: original.email,
        domain: original.domain,
      });
    });
  });

  it("gives the same settled answers as the original rows", () => {
    const settled = (list: readonly PreparedRow[]) => answerTestRows(list, ALL_CHECKS, NOW, true);
    const fromOriginal = settled(rows);
    const fromStored = settled(stored.map(rowFromStored));
    expect(fromStored.rows.map((r) => [r.row_no, r.number_status, r.email_status, r.checks])).toEqual(
      fromOriginal.rows.map((r) => [r.row_no, r.number_status, r.email_status, r.checks]),
    );
  });

  it("keeps a stored suppressed status (the worker passes the row status it stored)", () => {
    const rebuilt = rowFromStored({ row_no: 1, kind: "number", e164: "+12025550106", email: null, status: "suppressed" });
    const { rows: out } = answerTestRows([rebuilt], ["number.spam"], NOW, true);
    expect(out[0]?.checks[0]?.status).toBe("suppressed");
  });
});
