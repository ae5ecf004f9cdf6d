import { newId } from "@svc/domain";
import { listEvents, reconcileAccount, setAccountCheck } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import request from "supertest";
import { createTestEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually } from "../support/live";
import { routesKey, breakerKey } from "@svc/sources";

let seq = 0;
const someNumbers = (n: number) => Array.from({ length: n }, () => `+1646555${String(1000 + ((seq += 37) % 8999)).padStart(4, "0")}`);

async function activeEndpoint(gw: TestGateway, accountId: string, livemode: boolean): Promise<string> {
  const id = newId("webhookEndpoint");
  await gw.store.pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ($1, $2, $3, 'https://hooks.example.com/x', '{lookup.completed}', 'active', '\\x00')`,
    [id, accountId, livemode],
  );
  return id;
}

describe("live lookups through the fleet", () => {
  let gw: TestGateway;
  let sim: Simulator;
  let backup: Simulator;
  let worker: RunningService;
  let ledger: RunningService;
  let k: TestKey;

  beforeAll(async () => {
    gw = await startTestGateway();
    [sim, backup] = await Promise.all([startSimulator(), startSimulator()]);
    [worker, ledger] = await Promise.all([
      startService("check-worker", gw.env, {
        VENDOR_PRIMARY_URL: sim.url,
        VENDOR_PRIMARY_KEY: "sim-key",
        VENDOR_SECONDARY_URL: backup.url,
        VENDOR_SECONDARY_KEY: "sim-key",
        VENDOR_TIMEOUT_MS: "1000",
        VENDOR_RETRIES: "0",
        PURGE_INTERVAL_MS: "300",
      }),
      startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "500" }),
    ]);
    await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
  });
  beforeEach(async () => {
    k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    Object.assign(sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false });
    Object.assign(backup.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false });
  });
  afterAll(async () => {
    await Promise.all([worker?.stop(), ledger?.stop()]);
    await Promise.all([sim?.close(), backup?.close()]);
    await gw?.close();
  });

  const post = (body: object, key = k.key) => gw.http().post("/v1/lookup").set(bearer(key)).send(body);

  it("answers 200 when the sources answer within wait, 202 and a poll URL when they do not", async () => {
    const fast = await post({ numbers: someNumbers(2), checks: ["whatsapp", "carrier"], wait: 5 });
    expect(fast.status).toBe(200);
    expect(fast.body.results[0].checks[0]).toMatchObject({ service: "whatsapp", status: expect.stringMatching(/^(ok|unknown)$/) });

    sim.settings.latencyMs = 1_500;
    const endpoint = await activeEndpoint(gw, k.accountId, true);
    const slow = await post({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 0, webhook_endpoint_id: endpoint });
    expect(slow.status).toBe(202);
    expect(slow.headers.location).toBe(`${gw.url}/v1/lookups/${slow.body.id}`);
    expect(slow.body.results[0].checks[0].status).toBe("pending");
    const started = Date.now();
    const done = await gw.http().get(`/v1/lookups/${slow.body.id}?wait=10`).set(bearer(k.key));
    expect(done.body.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(5_000);
    const events = await eventually(async () => {
      const e = await listEvents(gw.store.pool, k.accountId, "lookup.completed");
      return e.length > 0 ? e : undefined;
    });
    expect(events[0]).toMatchObject({ endpoint_id: endpoint, livemode: true });
    expect(events[0]?.data).toMatchObject({ object: "lookup", id: slow.body.id, status: "completed", livemode: true, summary: { total: 2 } });
  });

  it("fails over to the next route when the first is down, and skips it once its breaker opens", async () => {
    sim.settings.outage = true;
    const answeredBefore = backup.stats.answered;
    const lookup = async () => {
      const res = await post({ numbers: someNumbers(3), checks: ["whatsapp"], wait: 10 });
      expect(res.status).toBe(200);
      // Every row answered by the backup route (the simulator answers each number conclusively or "unknown").
      for (const row of res.body.results) expect(row.checks[0].status).not.toBe("pending");
    };
    // Each lookup asks the primary once (one batch); 5 consecutive failures open its breaker.
    const breaker = breakerKey(gw.env.redisPrefix, "vendor-primary:whatsapp");
    let lookups = 0;
    while ((await gw.deps.redis.get(breaker)) !== "open" && lookups < 8) {
      await lookup();
      lookups += 1;
    }
    expect(await gw.deps.redis.get(breaker)).toBe("open");
    const primaryCalls = sim.stats.requests;
    for (let i = 0; i < 3; i += 1) await lookup();
    expect(sim.stats.requests).toBe(primaryCalls); // open breaker: the primary is skipped
    expect(backup.stats.answered - answeredBefore).toBe(3 * (lookups + 3));
  });

  it("gives unknown (free) when no route answers, then refuses with 503 while every route is down", async () => {
    sim.settings.outage = true;
    backup.settings.outage = true;
    // Failed answers are `unknown` and free; once both breakers are open the gateway refuses up front.
    await setAccountCheck(gw.store.pool, { accountId: k.accountId, checkCode: "number.hlr", enabled: true });
    const tries: number[] = [];
    let refused = null as null | { status: number; body: { error: { code: string; param: string } }; headers: Record<string, string> };
    for (let i = 0; i < 12 && !refused; i += 1) {
      const res = await post({ numbers: someNumbers(2), checks: ["carrier", "hlr"], wait: 10 });
      tries.push(res.status);
      if (res.status === 200) for (const row of res.body.results) expect(row.checks[1]).toMatchObject({ status: "unknown", billed: false });
      if (res.status === 503) refused = res as never;
      else await new Promise((r) => setTimeout(r, 300)); // the gateway re-reads route health once a second
    }
    expect(refused?.body.error).toMatchObject({ code: "temporarily_unavailable", param: "checks[1]" });
    expect(Number(refused?.headers["retry-after"])).toBeGreaterThan(0);
    await eventually(async () => ((await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros === 0n ? true : undefined));
    const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.account_id = $1 AND s.outcome = 'charged' AND s.check_code = 'number.hlr'`, [k.accountId]);
    expect(rows[0].n).toBe(0);
  });

  it("gives 404 once a lookup passes its retention period, and purges it", async () => {
    const res = await post({ numbers: someNumbers(1), checks: ["carrier"], wait: 10 });
    expect(res.status).toBe(200);
    // Another lookup of the month is kept a year (an account with a long retention): the month is not dropped
    // soon, so the check-worker deletes the expired one row by row (a month of one retention period goes whole:
    // tests/jobs/partitions.test.ts).
    const keptLong = await post({ numbers: someNumbers(1), checks: ["carrier"], wait: 10 });
    await gw.store.pool.query(`UPDATE lookups SET expires_at = now() + interval '400 days' WHERE id = $1`, [keptLong.body.id]);
    await gw.store.pool.query(`UPDATE lookups SET expires_at = now() - interval '1 second' WHERE id = $1`, [res.body.id]);
    const read = await gw.http().get(`/v1/lookups/${res.body.id}`).set(bearer(k.key));
    expect(read.status).toBe(404);
    await eventually(async () => ((await gw.store.pool.query(`SELECT 1 FROM lookups WHERE id = $1`, [res.body.id])).rowCount === 0 ? true : undefined), 5_000, "purged");
    const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM result_rows WHERE lookup_id = $1`, [res.body.id]);
    expect(rows[0].n).toBe(0);
    expect((await gw.http().get(`/v1/lookups/${keptLong.body.id}`).set(bearer(k.key))).status).toBe(200);
  });
});

describe("nothing is lost when a process dies", () => {
  let env: TestEnv;
  let sim: Simulator;
  beforeAll(async () => {
    env = await createTestEnv();
    sim = await startSimulator();
  });
  afterAll(async () => sim?.close());
  // Every worker of this fleet uses a short job lock: BullMQ lets one worker check for
  // stalled jobs once per (its) lock period, for the whole queue.
  const vendor = () => ({ VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "sim-key", JOB_LOCK_MS: "1500", WORK_LEASE_MS: "3000", WORK_LEASE_RENEW_MS: "1000" });

  it("completes a pending lookup after the gateway restarted", async () => {
    const gateway = await startService("gateway", env, { PORT: "0" });
    const worker = await startService("check-worker", env, vendor());
    const holder = await startTestGateway({ env }); // for store access and keys
    try {
      const k = await accountWithKey(holder.store, env.keyHashSecret, { mode: "live" });
      sim.settings.latencyMs = 1_500;
      const created = await request(gateway.url).post("/v1/lookup").set(bearer(k.key)).send({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 0 });
      expect(created.status).toBe(202);
      expect(await gateway.stop("SIGTERM")).toBe(0);
      const again = await startService("gateway", env, { PORT: "0" });
      try {
        const done = await request(again.url).get(`/v1/lookups/${created.body.id}?wait=10`).set(bearer(k.key));
        expect(done.body.status).toBe("completed");
      } finally {
        await again.stop();
      }
    } finally {
      sim.settings.latencyMs = 0;
      await worker.stop();
      await holder.close();
    }
  });

  it("finishes a lookup whose check-worker was killed mid-way, billing it once", async () => {
    const holder = await startTestGateway({ env });
    const ledger = await startService("billing-ledger", env, { SWEEP_INTERVAL_MS: "500" });
    try {
      const k = await accountWithKey(holder.store, env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
      sim.settings.latencyMs = 3_000;
      const first = await startService("check-worker", env, vendor());
      const before = sim.stats.requests;
      const created = await holder.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: someNumbers(3), checks: ["whatsapp", "carrier"], wait: 0 });
      expect(created.status).toBe(202);
      await eventually(async () => sim.stats.requests > before, 10_000, "vendor called");
      await first.stop("SIGKILL");
      sim.settings.latencyMs = 0;
      const second = await startService("check-worker", env, vendor());
      try {
        const done = await holder.http().get(`/v1/lookups/${created.body.id}?wait=25`).set(bearer(k.key));
        expect(done.body.status).toBe("completed");
        await eventually(async () => ((await reconcileAccount(holder.store.pool, k.accountId)).reservedMicros === 0n ? true : undefined), 15_000, "settled");
      } finally {
        await second.stop();
      }
      const { rows } = await holder.store.pool.query(`SELECT count(*)::int AS n FROM ledger_transactions WHERE account_id = $1 AND kind = 'charge'`, [k.accountId]);
      expect(rows[0].n).toBe(1);
      expect((await reconcileAccount(holder.store.pool, k.accountId)).balanced).toBe(true);
    } finally {
      sim.settings.latencyMs = 0;
      await ledger.stop();
      await holder.close();
    }
  });
});
