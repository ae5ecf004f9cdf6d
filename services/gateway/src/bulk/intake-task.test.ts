import { identifierHash } from "@svc/store";
import { requestHash } from "../http/request-hash";
import { runIntake, type BulkBody, type Intake, type IntakeInput } from "./intake-task";
import { intakeTenant } from "./receive";

const SECRET = "intake-test-secret-0123456789abcdef";
const json = (value: unknown): BulkBody => ({ type: "json", bytes: new Uint8Array(Buffer.from(typeof value === "string" ? value : JSON.stringify(value))) });
const form = (csv: string, fields: Record<string, string>): BulkBody => ({
  type: "form",
  form: { file: new Uint8Array(Buffer.from(csv)), fields: Object.entries(fields).map(([k, v]) => [k, [v]]) },
});
const input = (body: BulkBody, over: Partial<IntakeInput> = {}): IntakeInput => ({
  operation: "estimateJob",
  body,
  caller: { isSandbox: false, livemode: false },
  now: Date.parse("2026-11-23T10:00:00Z"),
  jobId: null,
  ...over,
});
const accepted = (i: Intake) => {
  if (!i.ok) throw new Error(`refused: ${i.refusal.code}`);
  return i;
};
const numbers = (n: number) => Array.from({ length: n }, (_, i) => `+1212${2_000_000 + 2 * i}`);

describe("runIntake (the work of an intake thread)", () => {
  it.each([
    ["not JSON", "{nope", "The request body is not valid JSON."],
    ["a bare JSON value (express.json's strict mode)", "5", "The request body is not valid JSON."],
    ["empty", "", "The request body must be a JSON object."],
    ["an array", "[1]", "The request body must be a JSON object."],
  ])("refuses a body that is %s before anything else", (_what, text, message) => {
    expect(runIntake(input(json(text)), SECRET)).toEqual({ ok: false, refusal: { code: "invalid_request", param: null, message, ...(message.includes("valid JSON") ? { suggestion: expect.any(String) } : {}) } });
  });

  it("refuses schema violations and unstorable text, naming the field but never the value", () => {
    const refused = runIntake(input(json({ numbers: ["+12025550100"], checks: ["spam"], colour: "red" })), SECRET);
    expect(refused).toMatchObject({ ok: false, refusal: { code: "invalid_request" } });
    const nul = runIntake(input(json({ numbers: ["+1202555\u0000"], checks: ["spam"] })), SECRET);
    expect(nul).toMatchObject({ ok: false, refusal: { code: "invalid_request" } });
    expect(JSON.stringify(nul)).not.toContain("+1202555");
  });

  it("hashes the body for Idempotency-Key as the event loop would, and a CSV upload of the same list as its JSON twin", () => {
    const body = { numbers: numbers(3), checks: ["spam"] };
    const fromJson = accepted(runIntake(input(json(body), { operation: "createJob", jobId: "job_a" }), SECRET));
    expect(fromJson.hash).toBe(requestHash("POST", "/v1/jobs", body));
    const fromCsv = accepted(runIntake(input(form(`number\n${numbers(3).join("\n")}\n`, { checks: "spam" }), { operation: "createJob", jobId: "job_a" }), SECRET));
    expect(fromCsv.hash).toBe(fromJson.hash);
    expect(fromCsv.fields).toEqual({ checks: ["spam"], progress_events: false });
  });

  it("counts rows by kind and status and renders a test job's rows with their usage", () => {
    const done = accepted(
      runIntake(input(json({ numbers: [...numbers(3), "garbage", numbers(1)[0]], emails: ["a@example.org"], checks: ["spam", "email"] }), { operation: "createJob", jobId: "job_t" }), SECRET),
    );
    expect(done.counts).toEqual({
      rows: { total: 6, valid: 4, invalid: 1, duplicate: 1 },
      number: { total: 5, valid: 3, invalid: 1, duplicate: 1 },
      email: { total: 1, valid: 1, invalid: 0, duplicate: 0 },
    });
    expect(done.plan).toMatchObject({ checks: ["number.spam", "email"], checksTotal: 6, early: null, late: null, counts: { number: 5, email: 1 } });
    expect(done.rows?.count).toBe(6);
    const lines = Buffer.from(done.rows?.text ?? []).toString("utf8").trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    expect(lines.every((l) => l.startsWith("job_t\t"))).toBe(true);
    // Inputs are stored masked: no row carries a number as sent.
    expect(lines[0]?.split("\t")[3]).not.toBe(numbers(1)[0]);
    expect(done.usage).toMatchObject({ day: "2026-11-23", identifiers: 6 });
    expect(done.cacheKeys).toBeNull();
  });

  it("keys a live request's valid rows for the answer cache, 32 bytes each, and renders them pending", () => {
    const list = [...numbers(4), "garbage"];
    const done = accepted(runIntake(input(json({ numbers: list, checks: ["whatsapp"] }), { operation: "createJob", jobId: "job_l", caller: { isSandbox: false, livemode: true } }), SECRET));
    expect(done.cacheKeys?.number.byteLength).toBe(4 * 32);
    expect(Buffer.from(done.cacheKeys?.number.subarray(0, 32) ?? []).equals(identifierHash(SECRET, "+12122000000"))).toBe(true);
    expect(done.cacheKeys?.email.byteLength).toBe(0);
    expect(done.usage).toBeNull();
    expect(Buffer.from(done.rows?.text ?? []).toString("utf8")).toContain('"status":"pending"');
  });

  it("plans a refused request without rendering anything, keeping the refusal for the event loop to raise in order", () => {
    const sandbox = accepted(runIntake(input(json({ numbers: numbers(2), checks: ["spam"] }), { operation: "createJob", jobId: "job_s", caller: { isSandbox: true, livemode: false } }), SECRET));
    expect(sandbox.plan.late).toMatchObject({ code: "sandbox_magic_only", param: "numbers[0]" });
    expect(sandbox.rows).toBeNull();
    const tooMany = accepted(runIntake(input(form(`number\n${numbers(11).join("\n")}\n`, { checks: "spam" }), { caller: { isSandbox: true, livemode: false } }), SECRET));
    // A limit broken by an uploaded file is reported against `file`.
    expect(tooMany.plan.early).toMatchObject({ code: "too_many_numbers", param: "file" });
  });
});

describe("intakeTenant", () => {
  const caller = (isSandbox: boolean, accountId: string) => ({ isSandbox, accountId }) as Parameters<typeof intakeTenant>[1];
  const req = (ip: string) => ({ ip }) as Parameters<typeof intakeTenant>[0];

  it("shares by account, and the public sandbox key by caller network", () => {
    expect(intakeTenant(req("203.0.113.5"), caller(false, "acct_1"))).toBe(intakeTenant(req("198.51.100.7"), caller(false, "acct_1")));
    expect(intakeTenant(req("203.0.113.5"), caller(true, "acct_sandbox"))).not.toBe(intakeTenant(req("198.51.100.7"), caller(true, "acct_sandbox")));
    expect(intakeTenant(req("2001:db8:1:2::5"), caller(true, "acct_sandbox"))).toBe(intakeTenant(req("2001:db8:1:2::99"), caller(true, "acct_sandbox")));
  });
});
