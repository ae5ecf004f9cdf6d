import { listEvents } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { spacedNumbers } from "../support/live";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());
afterEach(() => gw.setNow(null));

const numbers = spacedNumbers(13);
const post = (k: TestKey, n: number) => gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: numbers(n), checks: ["spam"], wait: 0 });
const limits = async (k: TestKey) => (await gw.http().get("/v1/limits").set(bearer(k.key))).body;

const LATE = new Date("2026-11-21T23:59:30.000Z");
const NEXT_DAY = new Date("2026-11-22T00:00:05.000Z");

describe("daily caps (UTC days, injectable clock)", () => {
  it("refuses past the account's daily identifiers cap with 429 daily_cap_reached until 00:00 UTC", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    await gw.store.pool.query(`UPDATE accounts SET daily_identifiers_cap = 10 WHERE id = $1`, [k.accountId]);
    gw.setNow(LATE);
    expect((await post(k, 8)).status).toBe(202);
    const refused = await post(k, 3);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "daily_cap_reached", retryable: true });
    expect(refused.headers["retry-after"]).toBe("30");
    expect((await post(k, 2)).status).toBe(202); // exactly at the cap is allowed
    expect((await limits(k)).daily_identifiers_cap).toEqual({ limit: 10, used: 10, resets_at: "2026-11-22T00:00:00.000Z" });
    await post(k, 1);
    const events = await listEvents(gw.store.pool, k.accountId, "limits.cap_reached");
    expect(events).toHaveLength(1); // once per crossing, not per refused request
    expect(events[0]?.data).toMatchObject({ object: "limit", cap: "daily_identifiers", limit: "10", resets_at: "2026-11-22T00:00:00.000Z" });

    gw.setNow(NEXT_DAY);
    expect((await post(k, 3)).status).toBe(202);
    expect((await limits(k)).daily_identifiers_cap).toMatchObject({ used: 3, resets_at: "2026-11-23T00:00:00.000Z" });
  });

  it("refuses past the account's daily spend cap with 429 daily_cap_reached", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    await gw.store.pool.query(`UPDATE accounts SET daily_spend_cap_micros = 20000 WHERE id = $1`, [k.accountId]);
    gw.setNow(LATE);
    expect((await post(k, 5)).status).toBe(202); // 0.010
    expect((await post(k, 5)).status).toBe(202); // 0.020
    const refused = await post(k, 1);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("daily_cap_reached");
    expect((await limits(k)).account_daily_spend_cap).toMatchObject({ limit: { amount: "0.02" }, used: { amount: "0.02" } });
    gw.setNow(NEXT_DAY);
    expect((await post(k, 1)).status).toBe(202);
  });

  it("refuses past a key's daily spend cap with 429 spend_cap_reached, leaving other keys alone", async () => {
    const agent = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write", "account:read"], dailySpendCapMicros: 10_000n });
    const sibling = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: agent.accountId });
    gw.setNow(LATE);
    expect((await post(agent, 5)).status).toBe(202);
    const refused = await post(agent, 1);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "spend_cap_reached", retryable: false });
    expect(Number(refused.headers["retry-after"])).toBe(30);
    expect((await post(sibling, 1)).status).toBe(202);
    expect((await limits(agent)).key_daily_spend_cap).toMatchObject({ limit: { amount: "0.01" }, used: { amount: "0.01" } });
    const events = await listEvents(gw.store.pool, agent.accountId, "limits.cap_reached");
    expect(events.map((e) => e.data.cap)).toEqual(["key_daily_spend"]);
    expect(JSON.stringify(events[0]?.data)).not.toContain(agent.key);
    gw.setNow(NEXT_DAY);
    expect((await post(agent, 1)).status).toBe(202);
  });
});

describe("GET /v1/account and /v1/limits", () => {
  it("shows balance, reserved, available and today's live usage", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 5_000_000n });
    await post(k, 4);
    const res = await gw.http().get("/v1/account").set(bearer(k.key));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: "account",
      id: k.accountId,
      livemode: true,
      balance: { amount: "5.00", currency: "USD" },
      reserved: { amount: "0.008", currency: "USD" },
      available: { amount: "4.992", currency: "USD" },
      today: { date: new Date().toISOString().slice(0, 10), identifiers: 4, spend: { amount: "0.008" } },
    });
  });

  it("states the request rate and sizes, and no caps for a test key even when the account has them", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await gw.store.pool.query(`UPDATE accounts SET daily_identifiers_cap = 5 WHERE id = $1`, [k.accountId]);
    expect(await limits(k)).toMatchObject({
      object: "limits",
      request_rate: { per_second: 10, burst: 20, scope: "key" },
      request_sizes: { lookup_identifiers: 100, job_identifiers: 50_000, checks_per_request: 20, lookup_identifier_checks: 2_000, job_identifier_checks: 100_000, body_bytes: 1_048_576, job_body_bytes: 4_194_304 },
      daily_identifiers_cap: null,
      account_daily_spend_cap: null,
      key_daily_spend_cap: null,
    });
  });

  it("needs account:read", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write"] });
    for (const path of ["/v1/account", "/v1/limits", "/v1/usage?from=2026-01-01&to=2026-01-02"]) {
      expect((await gw.http().get(path).set(bearer(k.key))).body.error.code).toBe("insufficient_scope");
    }
  });
});

describe("GET /v1/usage", () => {
  it.each([
    ["missing from", "to=2026-01-02", "from"],
    ["a bad date", "from=2026-02-30&to=2026-03-01", "from"],
    ["not a date", "from=yesterday&to=2026-03-01", "from"],
    ["to before from", "from=2026-03-02&to=2026-03-01", "to"],
    ["more than 366 days", "from=2025-01-01&to=2026-01-02", "to"],
    ["an unknown group_by", "from=2026-01-01&to=2026-01-02&group_by=hour", "group_by"],
    ["a year Postgres cannot store", "from=0000-01-01&to=0000-01-02", "from"],
  ])("refuses %s with 400 invalid_request and param", async (_name, query, param) => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const res = await gw.http().get(`/v1/usage?${query}`).set(bearer(k.key));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", param });
  });

  it("reports the key's mode only, zero-fills days, and skips days past retention", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const live = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: k.accountId });
    await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: ["+12025550100", "+12025550105", "bad"], checks: ["spam", "whatsapp"] });
    await post(live, 2);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const res = await gw.http().get(`/v1/usage?from=${yesterday}&to=${today}`).set(bearer(k.key));
    expect(res.body).toMatchObject({ object: "usage", livemode: false, group_by: "day" });
    expect(res.body.data).toEqual([
      { day: yesterday, checks: 0, conclusive: 0, cached: 0, billed_units: 0, cost: { amount: "0.00", currency: "USD" } },
      { day: today, checks: 6, conclusive: 2, cached: 0, billed_units: 0, cost: { amount: "0.00", currency: "USD" } },
    ]);
    await gw.store.pool.query(`UPDATE accounts SET retention_days = 1 WHERE id = $1`, [k.accountId]);
    try {
      // A day later, today's later lookups are still readable (24 h each): the day counts…
      gw.setNow(new Date(Date.now() + 86_400_000));
      expect((await gw.http().get(`/v1/usage?from=${yesterday}&to=${today}`).set(bearer(k.key))).body.totals.checks).toBe(6);
      // …two days later none is.
      gw.setNow(new Date(Date.now() + 2 * 86_400_000));
      expect((await gw.http().get(`/v1/usage?from=${yesterday}&to=${today}`).set(bearer(k.key))).body.totals.checks).toBe(0);
    } finally {
      gw.setNow(null);
    }
  });
});
