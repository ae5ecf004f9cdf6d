import { setAccountCheck } from "@svc/store";
import { PUBLIC_SANDBOX_KEY, addressDigest, emailFamily } from "@svc/domain";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { keysMatching } from "../support/redis-keys";

let gw: TestGateway;
let test: TestKey;
let live: TestKey;
beforeAll(async () => {
  gw = await startTestGateway();
});
// Fresh keys per test: each key is rate limited to 10 requests a second (burst 20).
beforeEach(async () => {
  test = await accountWithKey(gw.store, gw.env.keyHashSecret);
  live = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
});
afterAll(async () => gw.close());

const post = (key: string, body: unknown) => gw.http().post("/v1/lookup").set(bearer(key)).send(body as object);

async function expectError(res: { status: number; body: { error: Record<string, unknown> } }, status: number, code: string, param: string | null) {
  expect({ status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ status, code, param });
}

describe("request validation", () => {
  it.each([
    ["missing checks", { numbers: ["+12025550100"] }, "checks"],
    ["unknown field", { numbers: ["+12025550100"], checks: ["spam"], colour: "red" }, "colour"],
    ["wrong type in numbers[3]", { numbers: ["+12025550100", "+12025550101", "+12025550102", 7], checks: ["spam"] }, "numbers[3]"],
    ["numbers not an array", { numbers: "+12025550100", checks: ["spam"] }, "numbers"],
    ["unknown check code", { numbers: ["+12025550100"], checks: ["spam", "telepathy"] }, "checks[1]"],
    ["more than 20 checks", { numbers: ["+12025550100"], checks: Array(21).fill("spam") }, "checks"],
    ["the same check twice via its alias", { numbers: ["+12025550100"], checks: ["number.spam", "spam"] }, "checks[1]"],
    ["e-mails without an e-mail check", { numbers: ["+12025550100"], emails: ["a@example.org"], checks: ["spam"] }, "checks"],
    ["numbers without a phone check", { numbers: ["+12025550100"], checks: ["email"] }, "checks"],
    ["no identifiers", { checks: ["spam"] }, "numbers"],
    ["wait out of range", { numbers: ["+12025550100"], checks: ["spam"], wait: 31 }, "wait"],
    ["non-object body", [1, 2], null],
    ["max_cost.amount not an amount (free test mode too)", { numbers: ["+12025550100"], checks: ["spam"], max_cost: { amount: "abc" } }, "max_cost.amount"],
  ])("%s → 400 invalid_request", async (_name, body, param) => {
    await expectError(await post(test.key, body), 400, "invalid_request", param);
  });

  it("answers an identifier starting with an emoji as an invalid row, stored and read back masked", async () => {
    const res = await post(test.key, { emails: ["😀@example.org"], numbers: ["😀12025550100"], checks: ["email", "spam"] });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { email_status: string | null; number_status: string | null }) => r.number_status ?? r.email_status)).toEqual(["invalid", "invalid"]);
    const read = await gw.http().get(`/v1/lookups/${res.body.id}`).set(bearer(test.key));
    expect(read.body.results.map((r: { input: string }) => r.input)).toEqual(["*120******00", "😀***@example.org"]);
  });

  it("refuses a non-JSON content type", async () => {
    const res = await gw.http().post("/v1/lookup").set(bearer(test.key)).set("Content-Type", "text/plain").send("numbers=+12025550100");
    await expectError(res, 400, "invalid_request", null);
  });

  it("never echoes submitted values in errors", async () => {
    const res = await post(test.key, { numbers: ["+15557654321"], emails: ["victim@corp.example"], checks: ["spam"], "+15551112222": 1 });
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.body);
    for (const v of ["5557654321", "victim@corp.example", "15551112222"]) expect(text).not.toContain(v);
  });

  it("refuses a body over 1 MB with 413 payload_too_large", async () => {
    const big = { numbers: ["+12025550100"], checks: ["spam"], pad: "x".repeat(1024 * 1024) };
    await expectError(await post(test.key, big), 413, "payload_too_large", null);
  });

  it("refuses more than 100 identifiers with too_many_numbers", async () => {
    const numbers = Array.from({ length: 60 }, (_, i) => `+1212555${String(1000 + i * 7).padStart(4, "0")}`);
    const emails = Array.from({ length: 41 }, (_, i) => `person${i}x@corp${i}.example`);
    await expectError(await post(test.key, { numbers, emails, checks: ["spam", "email"] }), 400, "too_many_numbers", null);
    expect((await post(test.key, { numbers, emails: emails.slice(0, 40), checks: ["spam", "email"] })).status).toBe(200);
  });
});

describe("check availability", () => {
  it("refuses number.hlr (coming soon) with service_disabled on its index until switched on", async () => {
    await expectError(await post(test.key, { numbers: ["+12025550100"], checks: ["spam", "hlr"] }), 403, "service_disabled", "checks[1]");
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await setAccountCheck(gw.store.pool, { accountId: own.accountId, checkCode: "number.hlr", enabled: true });
    const res = await post(own.key, { numbers: ["+12025550100"], checks: ["spam", "hlr"] });
    expect(res.status).toBe(200);
    expect(res.body.results[0].checks[1]).toMatchObject({ service: "number.hlr", status: "ok", attributes: { status: "reachable" } });
  });

  it("refuses a bulk-only check on POST /v1/lookup", async () => {
    await expectError(await post(test.key, { numbers: ["+12025550100"], checks: ["whatsapp", "signal.registered"] }), 403, "service_disabled", "checks[1]");
  });

  it("refuses a check switched off for the account", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await setAccountCheck(gw.store.pool, { accountId: own.accountId, checkCode: "whatsapp", enabled: false });
    await expectError(await post(own.key, { numbers: ["+12025550100"], checks: ["spam", "whatsapp"] }), 403, "service_disabled", "checks[1]");
  });

  it("answers param null when real-time checks are off for the whole account", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await gw.store.pool.query(`UPDATE accounts SET realtime_enabled = false WHERE id = $1`, [own.accountId]);
    await expectError(await post(own.key, { numbers: ["+12025550100"], checks: ["spam"] }), 403, "service_disabled", null);
    // The catalog says so too.
    const catalog = await gw.http().get("/v1/services").set(bearer(own.key));
    expect(catalog.body.data.map((c: { realtime: boolean }) => c.realtime)).not.toContain(true);
  });
});

describe("test values and keys", () => {
  it("lets the public sandbox key use only documented test values (first offender named)", async () => {
    const ok = await post(PUBLIC_SANDBOX_KEY, { numbers: ["+12025550101", "+999123"], emails: ["catchall@example.com"], checks: ["spam", "email"] });
    expect(ok.status).toBe(200);
    await expectError(await post(PUBLIC_SANDBOX_KEY, { numbers: ["+12025550101", "+12125551234", "+12125559999"], checks: ["spam"] }), 403, "sandbox_magic_only", "numbers[1]");
    await expectError(await post(PUBLIC_SANDBOX_KEY, { numbers: ["+12025550101", "not a number"], checks: ["spam"] }), 403, "sandbox_magic_only", "numbers[1]");
    await expectError(await post(PUBLIC_SANDBOX_KEY, { emails: ["deliverable@example.com", "someone@example.com"], checks: ["email"] }), 403, "sandbox_magic_only", "emails[1]");
  });

  it("answers the documented role, free-provider and typo addresses in the sandbox, and the live rules for a test key's other addresses, all free", async () => {
    const sandbox = await post(PUBLIC_SANDBOX_KEY, { emails: ["info@example.com", "free@example.com", "typo@example.com"], checks: ["email"] });
    expect(sandbox.status).toBe(200);
    const answer = (res: typeof sandbox, input: string) => res.body.results.find((r: { input: string; email: string }) => r.email === input)?.checks[0];
    const base = { catch_all: false, disposable: false, mx_found: true, role_account: false, free_provider: false, did_you_mean: null };
    expect(answer(sandbox, "info@example.com")).toMatchObject({ status: "ok", registered: true, billed: false, attributes: { ...base, role_account: true } });
    expect(answer(sandbox, "free@example.com")).toMatchObject({ status: "ok", registered: true, billed: false, attributes: { ...base, free_provider: true } });
    expect(answer(sandbox, "typo@example.com")).toMatchObject({ status: "ok", registered: false, billed: false, attributes: { ...base, mx_found: false, did_you_mean: "gmail.com" } });
    const derived = await post(test.key, { emails: ["sales+eu@shop.example.org", "someone@gmail.com", "someone@gmial.com"], checks: ["email"] });
    expect(derived.status).toBe(200);
    expect(answer(derived, "sales+eu@shop.example.org")?.attributes).toMatchObject({ role_account: true, free_provider: false, did_you_mean: null });
    expect(answer(derived, "someone@gmail.com")?.attributes).toMatchObject({ role_account: false, free_provider: true, did_you_mean: null });
    expect(answer(derived, "someone@gmial.com")?.attributes).toMatchObject({ free_provider: false, did_you_mean: "gmail.com" });
  });

  it("refuses webhooks with the sandbox key", async () => {
    await expectError(await post(PUBLIC_SANDBOX_KEY, { numbers: ["+12025550101"], checks: ["spam"], webhook_endpoint_id: "we_0000000000" }), 400, "invalid_request", "webhook_endpoint_id");
  });

  it("refuses test numbers and the test e-mail domain with a live key", async () => {
    await expectError(await post(live.key, { numbers: ["+12125551234", "+1 202 555 0101"], checks: ["spam"] }), 400, "test_number_only", "numbers[1]");
    await expectError(await post(live.key, { emails: ["anyone@example.com"], checks: ["email"] }), 400, "test_number_only", "emails[0]");
  });

  it("refuses a webhook endpoint that is not a verified endpoint of the key's mode", async () => {
    await expectError(await post(test.key, { numbers: ["+12025550101"], checks: ["spam"], webhook_endpoint_id: "we_doesNotExist00" }), 400, "invalid_request", "webhook_endpoint_id");
  });
});

describe("enumeration guard", () => {
  const run = (start: number, n: number) => Array.from({ length: n }, (_, i) => `+1212555${String(start + i).padStart(4, "0")}`);

  it("refuses 20 consecutive numbers in any order, allows 19", async () => {
    expect((await post(test.key, { numbers: run(3000, 19), checks: ["spam"] })).status).toBe(200);
    await expectError(await post(test.key, { numbers: run(3000, 20).reverse(), checks: ["spam"] }), 403, "suspected_enumeration", "numbers");
  });

  it("refuses a live account's 50th address of one family in a UTC day, across requests", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    const batch = (from: number) => Array.from({ length: 10 }, (_, i) => `sales-${from + i}@shop.example`);
    for (let i = 0; i < 4; i += 1) {
      const res = await post(own.key, { emails: batch(i * 10), checks: ["email"], wait: 0 });
      expect(res.body.error?.code).not.toBe("suspected_enumeration");
    }
    const ninth = await post(own.key, { emails: batch(40).slice(0, 9), checks: ["email"], wait: 0 });
    expect(ninth.body.error?.code).not.toBe("suspected_enumeration");
    await expectError(await post(own.key, { emails: ["sales-99@shop.example"], checks: ["email"], wait: 0 }), 403, "suspected_enumeration", "emails");
    // Addresses already counted are not new; other families and other accounts are unaffected.
    expect((await post(own.key, { emails: ["sales-1@shop.example"], checks: ["email"], wait: 0 })).body.error?.code).not.toBe("suspected_enumeration");
    expect((await post(own.key, { emails: ["billing-1@shop.example"], checks: ["email"], wait: 0 })).body.error?.code).not.toBe("suspected_enumeration");
    const other = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    expect((await post(other.key, { emails: ["sales-99@shop.example"], checks: ["email"], wait: 0 })).body.error?.code).not.toBe("suspected_enumeration");
    // What Redis holds is keyed: neither the family nor an address matches its plain digest.
    const keys = await keysMatching(gw.deps.redis, `{${gw.env.redisPrefix}:enum:${own.accountId}:*`);
    expect(keys).toHaveLength(2);
    expect(keys.join()).not.toContain(emailFamily("sales-1@shop.example"));
    for (const key of keys) expect(await gw.deps.redis.smembers(key)).not.toContain(addressDigest("sales-1@shop.example"));
    // A new UTC day starts a new count.
    gw.setNow(new Date(Date.now() + 86_400_000));
    try {
      expect((await post(own.key, { emails: ["sales-99@shop.example"], checks: ["email"], wait: 0 })).body.error?.code).not.toBe("suspected_enumeration");
    } finally {
      gw.setNow(null);
    }
  });

  it("refuses 20 addresses on one domain differing only by digits or separators", async () => {
    const emails = Array.from({ length: 20 }, (_, i) => `j.smith${i}@corp.example`);
    await expectError(await post(test.key, { emails, checks: ["email"] }), 403, "suspected_enumeration", "emails");
    const people = Array.from({ length: 20 }, (_, i) => `${String.fromCharCode(97 + i)}person@corp.example`);
    expect((await post(test.key, { emails: people, checks: ["email"] })).status).toBe(200);
  });
});
