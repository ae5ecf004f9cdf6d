import { cacheAnswers, identifierHash } from "@svc/store";
import { serviceEnv } from "../support/env";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { PUBLIC_SANDBOX_KEY, TEST, balanceOf, emailsList, expectConforms, expectError, jobsApi, storedFor, usNumbers, type JobsApi } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

const usd = (amount: string) => ({ amount, currency: "USD" });

describe("POST /v1/jobs/estimate", () => {
  it("counts valid, invalid and duplicate rows per kind, and checks per input type", async () => {
    const k = await api.newKey();
    const res = await api.estimate(k.key, {
      numbers: [TEST.clean, "+1 202 555 0100", "garbage", TEST.suppressed, "+4915123456789"],
      emails: [TEST.deliverable, "DELIVERABLE@Example.com", "not-an-address", "someone@corp.example"],
      checks: ["spam", "whatsapp", "email"],
    });
    expect(res.status).toBe(200);
    expectConforms("estimate", res.body);
    expect(res.body).toEqual({
      object: "estimate",
      livemode: false,
      rows: { total: 9, valid: 5, invalid: 2, duplicate: 2 },
      numbers: { total: 5, valid: 3, invalid: 1, duplicate: 1 },
      emails: { total: 4, valid: 2, invalid: 1, duplicate: 1 },
      // 5 numbers × 2 phone checks + 4 e-mails × 1 e-mail check.
      checks_total: 14,
      cached_answers: 0,
      billable_checks_max: 0,
      max_cost: usd("0.00"),
      by_check: [
        { service: "number.spam", rows: 5, cached: 0, unit_price: usd("0.00"), max_cost: usd("0.00") },
        { service: "whatsapp", rows: 5, cached: 0, unit_price: usd("0.00"), max_cost: usd("0.00") },
        { service: "email", rows: 4, cached: 0, unit_price: usd("0.00"), max_cost: usd("0.00") },
      ],
    });
  });

  it("gives the maximum possible cost at live prices: every row × every check of its type (live key, nothing charged)", async () => {
    const live = await api.newKey({ mode: "live", balanceMicros: 5_000_000n });
    const before = { money: await balanceOf(gw, live.accountId), stored: await storedFor(gw, live.accountId) };
    const res = await api.estimate(live.key, {
      numbers: ["+12125550123", "+1 212 555 0123", "nonsense"],
      emails: ["someone@corp.example", "other@corp.example"],
      checks: ["number.spam", "whatsapp", "email"],
    });
    expect(res.status).toBe(200);
    expectConforms("estimate", res.body);
    // Default live prices: number.spam 0.002, whatsapp 0.004, email 0.003 per answer.
    // 3 numbers × (0.002 + 0.004) + 2 e-mails × 0.003 = 0.024: invalid and duplicate rows are reserved too.
    expect(res.body).toMatchObject({
      livemode: true,
      rows: { total: 5, valid: 3, invalid: 1, duplicate: 1 },
      checks_total: 8,
      cached_answers: 0,
      billable_checks_max: 4,
      max_cost: usd("0.024"),
      by_check: [
        { service: "number.spam", rows: 3, cached: 0, unit_price: usd("0.002"), max_cost: usd("0.006") },
        { service: "whatsapp", rows: 3, cached: 0, unit_price: usd("0.004"), max_cost: usd("0.012") },
        { service: "email", rows: 2, cached: 0, unit_price: usd("0.003"), max_cost: usd("0.006") },
      ],
    });
    expect({ money: await balanceOf(gw, live.accountId), stored: await storedFor(gw, live.accountId) }).toEqual(before);
    expect(before.stored).toMatchObject({ jobs: 0, rows: 0, reservations: 0 });
  });

  it("counts fresh cached answers (free) for a live key; expired answers and other checks' answers are not counted", async () => {
    const live = await api.newKey({ mode: "live", balanceMicros: 5_000_000n });
    const secret = serviceEnv(gw.env).CACHE_HASH_SECRET;
    const hash = (e164: string) => identifierHash(secret, e164);
    const ok = { status: "ok" as const, registered: true, attributes: {} };
    const now = Date.now();
    await cacheAnswers(gw.store.pool, "whatsapp", [{ hash: hash("+12125550140"), answer: ok }, { hash: hash("+12125550141"), answer: ok }], new Date(now - 60_000), new Date(now + 86_400_000));
    await cacheAnswers(gw.store.pool, "whatsapp", [{ hash: hash("+12125550142"), answer: ok }], new Date(now - 172_800_000), new Date(now - 60_000));
    await cacheAnswers(gw.store.pool, "number.spam", [{ hash: hash("+12125550143"), answer: ok }], new Date(now - 60_000), new Date(now + 86_400_000));
    const res = await api.estimate(live.key, { numbers: ["+12125550140", "+1 212 555 0141", "+12125550142", "+12125550143"], checks: ["whatsapp"] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      cached_answers: 2,
      billable_checks_max: 2,
      // The reservation stays the maximum: a cached answer may expire before the job runs.
      max_cost: usd("0.016"),
      by_check: [{ service: "whatsapp", rows: 4, cached: 2 }],
    });
  });

  it("refuses with 402 cost_limit_exceeded when the maximum possible cost is above max_cost, as the job would be", async () => {
    const live = await api.newKey({ mode: "live", balanceMicros: 5_000_000n });
    const body = { numbers: ["+12125550150", "+12125550151"], checks: ["whatsapp"] };
    expectError(await api.estimate(live.key, { ...body, max_cost: usd("0.007") }), 402, "cost_limit_exceeded", "max_cost.amount");
    expect((await api.estimate(live.key, { ...body, max_cost: usd("0.008") })).status).toBe(200);
  });

  it("counts identifiers too long to be valid as invalid rows: a per-row problem never fails the request", async () => {
    const k = await api.newKey();
    const res = await api.estimate(k.key, { numbers: [TEST.clean, "1".repeat(5_000)], emails: [`${"a".repeat(3_000)}@example.com`], checks: ["spam", "email"] });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual({ total: 3, valid: 1, invalid: 2, duplicate: 0 });
  });

  it("stores nothing and charges nothing", async () => {
    const k = await api.newKey();
    const before = { money: await balanceOf(gw, k.accountId), stored: await storedFor(gw, k.accountId) };
    for (let i = 0; i < 3; i += 1) {
      const res = await api.estimate(k.key, { numbers: [TEST.scam, TEST.slow, TEST.outage], emails: [TEST.pendingMail], checks: ["spam", "signal.registered", "email"] });
      expect(res.status).toBe(200);
      expect(res.body.checks_total).toBe(7);
    }
    // No job, row, chunk, reservation, ledger entry, usage or event: the same as before.
    expect({ money: await balanceOf(gw, k.accountId), stored: await storedFor(gw, k.accountId) }).toEqual(before);
    expect(before.stored).toMatchObject({ jobs: 0, rows: 0, chunks: 0, reservations: 0, usage: 0, events: 0 });
    const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM lookups WHERE account_id = $1`, [k.accountId]);
    expect(rows[0].n).toBe(0);
  });
});

describe("estimate limits", () => {
  it("accepts 50,000 identifiers and 100,000 identifier × applicable checks", async () => {
    const k = await api.newKey();
    // 25,000 numbers × 3 phone checks + 25,000 e-mails × 1 e-mail check = 100,000
    // (identifiers × every check would be 200,000: only applicable checks count).
    const res = await api.estimate(k.key, { numbers: usNumbers(25_000), emails: emailsList(25_000), checks: ["spam", "whatsapp", "carrier", "email"] });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual({ total: 50_000, valid: 50_000, invalid: 0, duplicate: 0 });
    expect(res.body.checks_total).toBe(100_000);
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0, rows: 0 });
  });

  it("refuses 50,001 identifiers with too_many_numbers", async () => {
    const k = await api.newKey();
    expectError(await api.estimate(k.key, { numbers: usNumbers(25_000), emails: emailsList(25_001), checks: ["spam", "email"] }), 400, "too_many_numbers", null);
    expectError(await api.estimate(k.key, { numbers: usNumbers(50_001), checks: ["spam"] }), 400, "too_many_numbers", null);
  });

  it("refuses more than 100,000 identifier × applicable checks with invalid_request", async () => {
    const k = await api.newKey();
    const tooMany = await api.estimate(k.key, { numbers: usNumbers(40_000), checks: ["spam", "whatsapp", "carrier"] });
    expectError(tooMany, 400, "invalid_request", "checks");
    // One pair over: 25,001 × 3 + 24,999 × 1 = 100,004.
    expectError(await api.estimate(k.key, { numbers: usNumbers(25_001), emails: emailsList(24_999), checks: ["spam", "whatsapp", "carrier", "email"] }), 400, "invalid_request", "checks");
  });

  it("lets the public sandbox key estimate at most 10 identifiers, documented values only", async () => {
    const ten = { numbers: [TEST.clean, TEST.scam, TEST.telemarketer, TEST.lowSpam, TEST.canada, TEST.germany, TEST.invalid], emails: [TEST.deliverable, TEST.catchall, TEST.invalidMail], checks: ["spam", "email"] };
    const ok = await api.estimate(PUBLIC_SANDBOX_KEY, ten);
    expect(ok.status).toBe(200);
    expect(ok.body.rows).toEqual({ total: 10, valid: 8, invalid: 2, duplicate: 0 });
    expectError(await api.estimate(PUBLIC_SANDBOX_KEY, { ...ten, emails: [...ten.emails, TEST.undeliverable] }), 400, "too_many_numbers", null);
    expectError(await api.estimate(PUBLIC_SANDBOX_KEY, { numbers: [TEST.clean, "+12125550123"], checks: ["spam"] }), 403, "sandbox_magic_only", "numbers[1]");
  });

  it("accepts a 3 MB body and refuses one over 4 MB with 413 payload_too_large", async () => {
    const k = await api.newKey();
    const pad = (n: number) => Array.from({ length: n }, (_, i) => `${String(i).padStart(6, "0")}${"x".repeat(980)}@pad.example`);
    const threeMb = { emails: pad(3_150), checks: ["email"] };
    const size = Buffer.byteLength(JSON.stringify(threeMb));
    expect(size).toBeGreaterThan(3 * 1024 * 1024);
    expect(size).toBeLessThan(4 * 1024 * 1024);
    const ok = await api.estimate(k.key, threeMb);
    expect(ok.status).toBe(200);
    expect(ok.body.emails).toEqual({ total: 3_150, valid: 0, invalid: 3_150, duplicate: 0 });

    const overFour = { emails: pad(4_300), checks: ["email"] };
    expect(Buffer.byteLength(JSON.stringify(overFour))).toBeGreaterThan(4 * 1024 * 1024);
    expectError(await api.estimate(k.key, overFour), 413, "payload_too_large", null);
  });
});

describe("estimate validation", () => {
  const one = { numbers: [TEST.clean] };
  it.each([
    ["unknown check code", { ...one, checks: ["spam", "telepathy"] }, "checks[1]"],
    ["numbers without a phone check", { ...one, emails: [TEST.deliverable], checks: ["email"] }, "checks"],
    ["e-mails without an e-mail check", { ...one, emails: [TEST.deliverable], checks: ["spam"] }, "checks"],
    ["no identifiers", { checks: ["spam"] }, "numbers"],
    ["empty identifier lists", { numbers: [], emails: [], checks: ["spam"] }, "numbers"],
    ["missing checks", { ...one }, "checks"],
    ["empty checks", { ...one, checks: [] }, "checks"],
    ["more than 20 checks", { ...one, checks: Array(21).fill("spam") }, "checks"],
    ["the same check twice via its alias", { ...one, checks: ["number.spam", "whatsapp", "spam"] }, "checks[2]"],
    ["unknown field", { ...one, checks: ["spam"], colour: "red" }, "colour"],
    ["a lookup-only field", { ...one, checks: ["spam"], wait: 5 }, "wait"],
    ["wrong type in numbers[2]", { numbers: [TEST.clean, TEST.scam, 7], checks: ["spam"] }, "numbers[2]"],
    ["emails not an array", { emails: TEST.deliverable, checks: ["email"] }, "emails"],
    ["max_cost.amount of the wrong type", { ...one, checks: ["spam"], max_cost: { amount: true } }, "max_cost.amount"],
    ["max_cost in another currency", { ...one, checks: ["spam"], max_cost: { amount: "1.00", currency: "EUR" } }, "max_cost.currency"],
    ["progress_events not a boolean", { ...one, checks: ["spam"], progress_events: "yes" }, "progress_events"],
    ["webhook_endpoint_id that is no endpoint", { ...one, checks: ["spam"], webhook_endpoint_id: "we_doesNotExist00" }, "webhook_endpoint_id"],
    ["a body that is not an object", [TEST.clean], null],
  ])("%s → 400 invalid_request", async (_name, body, param) => {
    const k = await api.newKey();
    expectError(await api.estimate(k.key, body), 400, "invalid_request", param);
  });

  it("refuses malformed JSON and other media types without a param", async () => {
    const k = await api.newKey();
    const broken = await gw.http().post("/v1/jobs/estimate").set("Authorization", `Bearer ${k.key}`).set("Content-Type", "application/json").send('{"numbers": [');
    expectError(broken, 400, "invalid_request", null);
    const text = await gw.http().post("/v1/jobs/estimate").set("Authorization", `Bearer ${k.key}`).set("Content-Type", "text/plain").send(TEST.clean);
    expectError(text, 400, "invalid_request", null);
  });

  it("refuses a coming-soon check with service_disabled on its index, but takes bulk-only checks", async () => {
    const k = await api.newKey();
    expectError(await api.estimate(k.key, { numbers: [TEST.clean], checks: ["spam", "hlr"] }), 403, "service_disabled", "checks[1]");
    const bulkOnly = await api.estimate(k.key, { numbers: [TEST.clean], checks: ["signal.registered"] });
    expect(bulkOnly.status).toBe(200);
    expect(bulkOnly.body.by_check.map((c: { service: string }) => c.service)).toEqual(["signal.registered"]);
  });

  it("applies the enumeration guard", async () => {
    const k = await api.newKey();
    const run = Array.from({ length: 20 }, (_, i) => `+1212555${String(4000 + i)}`);
    expectError(await api.estimate(k.key, { numbers: run, checks: ["spam"] }), 403, "suspected_enumeration", "numbers");
    expect((await api.estimate(k.key, { numbers: run.slice(1), checks: ["spam"] })).status).toBe(200);
  });

  it("needs jobs:write", async () => {
    const reader = await api.newKey({ scopes: ["jobs:read", "jobs:read_all", "lookup:write"] });
    expectError(await api.estimate(reader.key, { numbers: [TEST.clean], checks: ["spam"] }), 403, "insufficient_scope");
  });
});
