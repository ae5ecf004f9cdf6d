import { spawnSync } from "node:child_process";
import path from "node:path";
import { listEvents, reconcileAccount } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, startLiveWorkers, type LiveWorkers } from "../support/live";
import { routesKey } from "@svc/sources";

let gw: TestGateway;
let workers: LiveWorkers;
beforeAll(async () => {
  gw = await startTestGateway();
  workers = await startLiveWorkers(gw.env);
  // The check-worker advertises its routes; wait for it so "all routes down" is known.
  await eventually(async () => (await gw.deps.redis.get(routesKey(gw.env.redisPrefix, "number.spam"))) ?? undefined, 15_000, "routes advertised");
});
afterAll(async () => {
  await workers?.stop();
  await gw?.close();
});

const numbers = (start: number, n: number) => Array.from({ length: n }, (_, i) => `+1212555${String(start + i * 3).padStart(4, "0")}`);
const post = (key: string, body: object) => gw.http().post("/v1/lookup").set(bearer(key)).send(body);

async function account(k: TestKey) {
  return (await gw.http().get("/v1/account").set(bearer(k.key))).body;
}

describe("live lookups are reserved, checked and settled", () => {
  it("charges conclusive answers, releases the rest, and reconciles to the micro-dollar", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const res = await post(k.key, { numbers: [...numbers(1000, 3), "not a number", "+12125551000"], emails: [], checks: ["spam", "carrier"], wait: 10 });
    expect(res.status).toBe(200);
    expect(res.body.livemode).toBe(true);
    // 5 identifiers × (spam 0.002 + carrier 0.001) reserved; 3 valid unique numbers × 2 checks charged.
    const rows = res.body.results;
    expect(rows[0].checks.map((c: { status: string; billed: boolean }) => [c.status, c.billed])).toEqual([["ok", true], ["ok", true]]);
    expect(rows[3].number_status).toBe("invalid");
    expect(rows[4].number_status).toBe("duplicate");
    const settled = await eventually(async () => {
      const r = await reconcileAccount(gw.store.pool, k.accountId);
      return r.reservedMicros === 0n ? r : undefined;
    });
    expect(settled).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 9_000n, cachedBalanceMicros: 991_000n, openReservationsMicros: 0n });
    expect((await account(k)).balance).toEqual({ amount: "0.991", currency: "USD" });
  });

  it("answers a repeat from the cache: marked cached and not billed", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const body = { numbers: numbers(2000, 2), checks: ["carrier"], wait: 10 };
    const first = await post(k.key, body);
    expect(first.body.results[0].checks[0]).toMatchObject({ cached: false, billed: true });
    const second = await post(k.key, body);
    expect(second.body.results[0].checks[0]).toMatchObject({ status: "ok", cached: true, billed: false });
    const r = await eventually(async () => {
      const rec = await reconcileAccount(gw.store.pool, k.accountId);
      return rec.reservedMicros === 0n ? rec : undefined;
    });
    expect(r.ledgerBalanceMicros).toBe(1_000_000n - 2_000n);
    const usage = await gw.http().get(`/v1/usage?from=${new Date().toISOString().slice(0, 10)}&to=${new Date().toISOString().slice(0, 10)}&group_by=check`).set(bearer(k.key));
    expect(usage.body.data).toEqual([{ service: "carrier", checks: 4, conclusive: 4, cached: 2, billed_units: 2, cost: { amount: "0.002", currency: "USD" } }]);
  });

  it("refuses with 402 insufficient_balance, never overdrawing under hundreds of concurrent requests", async () => {
    // 0.05 USD covers exactly 5 requests of 5 numbers × number.spam (0.002).
    const owner = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 50_000n });
    const keys = [owner, ...(await Promise.all(Array.from({ length: 19 }, () => accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: owner.accountId }))))];
    const requests = Array.from({ length: 200 }, (_, i) => post((keys[i % keys.length] as TestKey).key, { numbers: numbers(3000 + i * 20, 5), checks: ["spam"], wait: 0 }).then((r) => r));
    const responses = await Promise.all(requests);
    const accepted = responses.filter((r) => r.status === 200 || r.status === 202);
    const refused = responses.filter((r) => r.status === 402);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(195);
    expect(refused[0]?.body.error).toMatchObject({ code: "insufficient_balance", retryable: false });
    const settled = await eventually(async () => {
      const rec = await reconcileAccount(gw.store.pool, owner.accountId);
      return rec.reservedMicros === 0n ? rec : undefined;
    }, 20_000);
    expect(settled).toMatchObject({ balanced: true, ledgerBalanceMicros: 0n, cachedBalanceMicros: 0n });
  });

  it("refuses when the maximum possible cost is above max_cost, naming max_cost.amount", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    const res = await post(k.key, { numbers: numbers(4000, 3), checks: ["spam", "carrier"], max_cost: { amount: "0.0089" }, wait: 0 });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({ code: "cost_limit_exceeded", param: "max_cost.amount" });
    expect((await post(k.key, { numbers: numbers(4000, 3), checks: ["spam", "carrier"], max_cost: { amount: 0.009 }, wait: 0 })).status).not.toBe(402);
    const bad = await post(k.key, { numbers: numbers(4000, 3), checks: ["spam"], max_cost: { amount: "1e3" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("max_cost.amount");
  });

  it("answers 503 temporarily_unavailable, uncharged, when every route of a check is down", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    // No route serves e-mail in this fleet yet: the worker advertises it with none.
    const res = await post(k.key, { emails: ["someone@corp.example"], checks: ["email"] });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: "temporarily_unavailable", retryable: true, param: "checks[0]" });
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    expect((await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros).toBe(0n);
  });
});

describe("balance.low and usage against the ledger", () => {
  const admin = (...args: string[]) => {
    const res = spawnSync(process.execPath, [path.resolve(__dirname, "../../packages/admin/dist/cli.js"), ...args], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
      encoding: "utf8",
    });
    expect(res.stderr).toBe("");
    return JSON.parse(res.stdout);
  };
  const settledAll = (accountId: string) =>
    eventually(async () => ((await reconcileAccount(gw.store.pool, accountId)).reservedMicros === 0n ? true : undefined), 10_000, "settled");

  it("records balance.low once per crossing, re-armed by a top-up or a new threshold", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    admin("account", "set", "--account", k.accountId, "--low-balance-threshold", "0.999");
    await post(k.key, { numbers: numbers(5000, 3), checks: ["spam"], wait: 10 });
    await settledAll(k.accountId);
    await post(k.key, { numbers: numbers(5100, 3), checks: ["spam"], wait: 10 });
    await settledAll(k.accountId);
    let events = await listEvents(gw.store.pool, k.accountId, "balance.low");
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toEqual({ object: "account", balance: { amount: "0.994", currency: "USD" }, threshold: { amount: "0.999", currency: "USD" } });
    expect(events[0]?.livemode).toBe(true);

    const topup = admin("balance", "topup", "--account", k.accountId, "--amount", "1", "--reason", "invoice 42");
    expect(topup).toMatchObject({ object: "balance_change", kind: "topup", amount: { amount: "1.00" }, balance: { amount: "1.988" }, reason: "invoice 42" });
    admin("account", "set", "--account", k.accountId, "--low-balance-threshold", "1.99");
    await post(k.key, { numbers: numbers(5200, 1), checks: ["spam"], wait: 10 });
    await settledAll(k.accountId);
    events = await listEvents(gw.store.pool, k.accountId, "balance.low");
    expect(events).toHaveLength(2);

    const reconciliation = admin("ledger", "reconcile", "--account", k.accountId);
    expect(reconciliation).toMatchObject({ balanced: true, balance: { amount: "1.986" }, ledger_balance: { amount: "1.986" }, reserved: { amount: "0.00" } });
    expect(reconciliation.by_kind).toMatchObject({ topup: { transactions: 2, amount: { amount: "2.00" } }, charge: { transactions: 3, amount: { amount: "-0.014" } } });
  });

  it("reports usage whose cost equals what the ledger charged", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    await post(k.key, { numbers: [...numbers(6000, 4), "+12125556000"], checks: ["spam", "carrier"], wait: 10 });
    // The worker caches answers just after it wakes the waiting request: wait for the
    // carrier answers (one statement) before asking again, or a quick notice wins the race.
    await eventually(async () => ((await gw.store.pool.query(`SELECT 1 FROM check_cache WHERE check_code = 'carrier' LIMIT 1`)).rowCount ? true : undefined), 10_000, "answers cached");
    await post(k.key, { numbers: numbers(6000, 2), checks: ["carrier"], wait: 10 });
    await settledAll(k.accountId);
    const today = new Date().toISOString().slice(0, 10);
    const usage = (await gw.http().get(`/v1/usage?from=${today}&to=${today}&group_by=check`).set(bearer(k.key))).body;
    const { rows } = await gw.store.pool.query<{ charged: bigint; units: number }>(
      `SELECT COALESCE(-sum(e.amount_micros), 0)::bigint AS charged,
              (SELECT count(*)::int FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.account_id = $1 AND s.outcome = 'charged') AS units
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
       WHERE t.account_id = $1 AND t.kind = 'charge' AND e.book = 'balance'`,
      [k.accountId],
    );
    expect(usage.totals.cost.amount).toBe((Number(rows[0]?.charged) / 1e6).toFixed(3));
    expect(usage.totals.billed_units).toBe(rows[0]?.units);
    expect(usage.totals).toMatchObject({ checks: 12, cached: 2, billed_units: 8 });
  });
});

describe("Idempotency-Key when the gateway dies after reserving", () => {
  // What a gateway killed (or failing) after the reserving commit leaves behind: the
  // claim still in progress with its lock lapsed, the resource bound, no response stored.
  const crashAfterCommit = (accountId: string) =>
    gw.store.pool.query(
      `UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_headers = NULL, response_body = NULL,
              locked_until = now() - interval '1 second' WHERE account_id = $1`,
      [accountId],
    );
  const counts = async (accountId: string) =>
    (
      await gw.store.pool.query(
        `SELECT (SELECT count(*)::int FROM lookups WHERE account_id = $1) AS lookups, (SELECT count(*)::int FROM jobs WHERE account_id = $1) AS jobs,
                (SELECT count(*)::int FROM reservations WHERE account_id = $1) AS reservations`,
        [accountId],
      )
    ).rows[0];
  const settledBalance = (accountId: string) =>
    eventually(async () => {
      const r = await reconcileAccount(gw.store.pool, accountId);
      return r.reservedMicros === 0n ? r.ledgerBalanceMicros : undefined;
    });

  it("answers the retry of a lookup with the lookup already created, reserved and charged once", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const body = { numbers: numbers(3000, 2), checks: ["carrier"], wait: 10 };
    const send = () => gw.http().post("/v1/lookup").set(bearer(k.key)).set("Idempotency-Key", "crash-lookup").send(body);
    const first = await send();
    expect(first.status).toBe(200);
    await crashAfterCommit(k.accountId);
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.body.results.map((r: { input: string }) => r.input)).toEqual(body.numbers);
    expect((await send()).headers["idempotent-replayed"]).toBe("true");
    expect(await counts(k.accountId)).toEqual({ lookups: 1, jobs: 0, reservations: 1 });
    expect(await settledBalance(k.accountId)).toBe(1_000_000n - 2_000n);
  });

  it("answers the retry of a job with the job already created, reserved once", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const body = { numbers: numbers(7000, 3), checks: ["carrier"] };
    const send = () => gw.http().post("/v1/jobs").set(bearer(k.key)).set("Idempotency-Key", "crash-job").send(body);
    const first = await send();
    expect(first.status).toBe(201);
    await crashAfterCommit(k.accountId);
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: first.body.id, object: "job", estimate: first.body.estimate });
    expect(retry.headers.location).toBe(first.headers.location);
    expect(await counts(k.accountId)).toEqual({ lookups: 0, jobs: 1, reservations: 1 });
    const done = await eventually(async () => {
      const r = await gw.http().get(`/v1/jobs/${first.body.id}`).set(bearer(k.key));
      return r.body.status === "completed" && r.body.cost.reserved.amount === "0.00" ? r.body : undefined;
    });
    expect(done.cost.charged).toEqual({ amount: "0.003", currency: "USD" });
    expect(await settledBalance(k.accountId)).toBe(1_000_000n - 3_000n);
  });
});
