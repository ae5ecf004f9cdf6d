import { newId } from "@svc/domain";
import { abandonCancelledChunk, claimChunk, listEvents, reconcileAccount, staleChunks, withTransaction } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { createRedis, Producer, waitForRedis } from "@svc/queues";
import { createLogger } from "@svc/process";
import { CheckRunner, VendorHttpSource, routesKey } from "@svc/sources";
import { runJobChunk } from "../../services/check-worker/src/job-chunks";
import { deleteKeysUnder } from "../support/redis-keys";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers } from "../support/live";

let gw: TestGateway;
let sim: Simulator;
beforeAll(async () => {
  gw = await startTestGateway({ config: { JOB_CHUNK_ROWS: "50" } });
  sim = await startSimulator();
});
afterAll(async () => {
  await sim?.close();
  await gw?.close();
});

const numbers = spacedNumbers(3);
const workerEnv = (extra: Record<string, string> = {}) => ({ VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "sim-key", VENDOR_RETRIES: "0", JOB_LOCK_MS: "1500", CHUNK_STALE_MS: "1000", SWEEP_INTERVAL_MS: "500", WORK_LEASE_MS: "3000", WORK_LEASE_RENEW_MS: "1000", ...extra });
const ledgerEnv = { SWEEP_INTERVAL_MS: "500", JOB_LOCK_MS: "1500" };

async function endpoint(accountId: string): Promise<string> {
  const id = newId("webhookEndpoint");
  await gw.store.pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ($1, $2, true, 'https://hooks.example.com/x', '{job.completed,job.failed,job.progress}', 'active', '\\x00')`,
    [id, accountId],
  );
  return id;
}

const createJob = (k: TestKey, body: object) => gw.http().post("/v1/jobs").set(bearer(k.key)).send(body);
const waitJob = async (k: TestKey, id: string, final = ["completed", "failed", "cancelled"]) =>
  eventually(async () => {
    const res = await gw.http().get(`/v1/jobs/${id}?wait=10`).set(bearer(k.key));
    return final.includes(res.body.status) && res.body.finished_at ? res.body : undefined;
  }, 60_000, "job final");
const settled = (accountId: string) => eventually(async () => ((await reconcileAccount(gw.store.pool, accountId)).reservedMicros === 0n ? true : undefined), 20_000, "settled");

async function settlementsOf(accountId: string) {
  const { rows } = await gw.store.pool.query<{ outcome: string; n: number }>(
    `SELECT s.outcome, count(*)::int AS n FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.account_id = $1 GROUP BY s.outcome`,
    [accountId],
  );
  return Object.fromEntries(rows.map((r) => [r.outcome, r.n]));
}

describe("live bulk jobs through the fleet", () => {
  let worker: RunningService;
  let ledger: RunningService;
  beforeAll(async () => {
    [worker, ledger] = await Promise.all([startService("check-worker", gw.env, workerEnv()), startService("billing-ledger", gw.env, ledgerEnv)]);
    await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes");
  });
  afterAll(async () => {
    await Promise.all([worker?.stop(), ledger?.stop()]);
  });
  beforeEach(() => Object.assign(sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false }));

  it("processes a job in chunks, counts progress exactly, bills every conclusive answer once", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const hook = await endpoint(k.accountId);
    const list = [...numbers(170), "not a number", "+14155551000", "+14155551000"];
    const created = await createJob(k, { numbers: list, checks: ["whatsapp", "carrier"], webhook_endpoint_id: hook, progress_events: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "queued", livemode: true, progress: { total: 173, checks_total: 346, done: 0 } });
    expect(created.body.cost.reserved).toEqual({ amount: "0.865", currency: "USD" }); // 173 numbers × (whatsapp 0.004 + carrier 0.001)
    const { rows: chunks } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM job_chunks WHERE job_id = $1`, [created.body.id]);
    expect(chunks[0].n).toBe(4); // 173 rows in chunks of 50

    const done = await waitJob(k, created.body.id);
    expect(done.status).toBe("completed");
    expect(done.progress.done).toBe(done.progress.checks_total);
    expect(done.progress.conclusive + done.progress.non_billable).toBe(done.progress.done);
    await settled(k.accountId);
    const s = await settlementsOf(k.accountId);
    expect(s.charged).toBe(done.progress.conclusive);
    expect(s.charged + s.released).toBe(done.progress.checks_total);
    const rec = await reconcileAccount(gw.store.pool, k.accountId);
    expect(rec.balanced).toBe(true);
    const charged = 10_000_000n - rec.ledgerBalanceMicros;
    const after = (await gw.http().get(`/v1/jobs/${created.body.id}`).set(bearer(k.key))).body;
    expect(after.cost.reserved).toEqual({ amount: "0.00", currency: "USD" });
    expect(Math.round(Number(after.cost.charged.amount) * 1e6)).toBe(Number(charged));

    const completed = await listEvents(gw.store.pool, k.accountId, "job.completed");
    expect(completed).toHaveLength(1);
    expect(completed[0]?.data).toMatchObject({ object: "job", id: created.body.id, status: "completed", progress: done.progress, results_url: `${gw.url}/v1/jobs/${created.body.id}/results` });
    expect(await listEvents(gw.store.pool, k.accountId, "job.progress")).toHaveLength(1); // opt-in, at most once a minute
  });

  it("cancels a running job: unsent rows are never sent nor charged, rows in flight finish and are billed", async () => {
    sim.settings.latencyMs = 800;
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const slow = await startService("check-worker", gw.env, workerEnv({ CONCURRENCY: "1" }));
    await worker.stop(); // only the one-at-a-time worker runs now
    try {
      const before = sim.stats.requests;
      const created = await createJob(k, { numbers: numbers(500), checks: ["whatsapp"] });
      expect(created.status).toBe(201);
      await eventually(async () => sim.stats.requests > before, 10_000, "first chunk sent");
      const cancelled = await gw.http().delete(`/v1/jobs/${created.body.id}`).set(bearer(k.key));
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe("cancelled");
      const final = await waitJob(k, created.body.id, ["cancelled"]);
      expect(final.progress.done).toBe(500);
      await settled(k.accountId);
      const sentChunks = sim.stats.requests - before; // one vendor call per chunk
      expect(sentChunks).toBeGreaterThanOrEqual(1);
      expect(sentChunks).toBeLessThan(10);
      const { rows } = await gw.store.pool.query<{ status: string; billed: boolean; n: number }>(
        `SELECT c->>'status' AS status, (c->>'billed')::boolean AS billed, count(*)::int AS n FROM result_rows r, jsonb_array_elements(r.checks) c WHERE r.job_id = $1 GROUP BY 1, 2`,
        [created.body.id],
      );
      const cancelledRows = rows.filter((r) => r.status === "cancelled").reduce((n, r) => n + r.n, 0);
      expect(cancelledRows).toBe(500 - sentChunks * 50);
      expect(rows.every((r) => r.status !== "cancelled" || r.billed === false)).toBe(true);
      const s = await settlementsOf(k.accountId);
      expect(s.charged).toBe(final.progress.conclusive);
      expect(s.charged).toBeGreaterThan(0);
      expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n });
    } finally {
      await slow.stop();
      worker = await startService("check-worker", gw.env, workerEnv());
    }
  });

  it("fails a job whose processing cannot go on, with job.failed, releasing what was not done", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const hook = await endpoint(k.accountId);
    await worker.stop();
    try {
      const created = await createJob(k, { numbers: numbers(120), checks: ["whatsapp"], webhook_endpoint_id: hook });
      // Stored data a worker cannot read: no retry will fix it.
      await gw.store.pool.query(`UPDATE result_rows SET checks = '"corrupt"'::jsonb WHERE job_id = $1 AND row_no = 60`, [created.body.id]);
      worker = await startService("check-worker", gw.env, workerEnv());
      const final = await waitJob(k, created.body.id);
      expect(final.status).toBe("failed");
      expect(final.failure).toEqual({ code: "processing_failed", message: expect.any(String) });
      const events = await listEvents(gw.store.pool, k.accountId, "job.failed");
      expect(events).toHaveLength(1);
      expect(events[0]?.data).toMatchObject({ object: "job", id: created.body.id, status: "failed", failure: { code: "processing_failed" } });
      await settled(k.accountId);
      expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n });
    } finally {
      if (worker.child.exitCode !== null) worker = await startService("check-worker", gw.env, workerEnv());
    }
  });
});

describe("nothing is lost when processes die or Redis is emptied mid-job", () => {
  it("finishes every chunk once after a check-worker is killed mid-chunk", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const ledger = await startService("billing-ledger", gw.env, ledgerEnv);
    sim.settings.latencyMs = 2_000;
    const first = await startService("check-worker", gw.env, workerEnv());
    try {
      const before = sim.stats.requests;
      const created = await createJob(k, { numbers: numbers(150), checks: ["whatsapp"] });
      await eventually(async () => sim.stats.requests > before, 10_000, "chunks in flight");
      await first.stop("SIGKILL");
      sim.settings.latencyMs = 0;
      const second = await startService("check-worker", gw.env, workerEnv());
      try {
        const final = await waitJob(k, created.body.id);
        expect(final.status).toBe("completed");
        expect(final.progress.done).toBe(150);
        await settled(k.accountId);
      } finally {
        await second.stop();
      }
      const s = await settlementsOf(k.accountId);
      expect(s.charged + (s.released ?? 0)).toBe(150);
      const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM job_chunks WHERE job_id = $1 AND status = 'done'`, [created.body.id]);
      expect(rows[0].n).toBe(3);
      expect((await reconcileAccount(gw.store.pool, k.accountId)).balanced).toBe(true);
    } finally {
      sim.settings.latencyMs = 0;
      await ledger.stop();
    }
  });

  it("finishes a cancelled job whose in-flight chunk lost its worker: the rows sent are answered and billed, the money settles", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const ledger = await startService("billing-ledger", gw.env, ledgerEnv);
    sim.settings.latencyMs = 2_000;
    const first = await startService("check-worker", gw.env, workerEnv({ CONCURRENCY: "1" }));
    try {
      const before = sim.stats.requests;
      const created = await createJob(k, { numbers: numbers(100), checks: ["whatsapp"] });
      await eventually(async () => sim.stats.requests > before, 10_000, "first chunk in flight");
      expect((await gw.http().delete(`/v1/jobs/${created.body.id}`).set(bearer(k.key))).body.status).toBe("cancelled");
      await first.stop("SIGKILL");
      sim.settings.latencyMs = 0;
      const second = await startService("check-worker", gw.env, workerEnv());
      try {
        const final = await waitJob(k, created.body.id, ["cancelled"]);
        expect(final.progress.done).toBe(100);
        await settled(k.accountId);
      } finally {
        await second.stop();
      }
      const { rows } = await gw.store.pool.query<{ status: string; n: number }>(
        `SELECT c->>'status' AS status, count(*)::int AS n FROM result_rows r, jsonb_array_elements(r.checks) c WHERE r.job_id = $1 GROUP BY 1`,
        [created.body.id],
      );
      const by = Object.fromEntries(rows.map((r) => [r.status, r.n]));
      expect(by.cancelled).toBe(50); // the second chunk was never sent
      expect(by.pending).toBeUndefined(); // the first chunk's rows were answered
      const s = await settlementsOf(k.accountId);
      expect(s.charged).toBeGreaterThan(0);
      expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n });
    } finally {
      sim.settings.latencyMs = 0;
      await ledger.stop();
    }
  });

  it("bills a job purged the moment it completes, before the billing-ledger got to it", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const only = await startService("check-worker", gw.env, workerEnv()); // no billing-ledger running
    try {
      const created = await createJob(k, { numbers: numbers(60), checks: ["whatsapp"] });
      const final = await waitJob(k, created.body.id);
      expect(final.status).toBe("completed");
      const purged = await gw.http().delete(`/v1/jobs/${created.body.id}`).set(bearer(k.key));
      expect(purged.body.purged_at).not.toBeNull();
      const s = await settlementsOf(k.accountId);
      expect(s.charged).toBe(final.progress.conclusive);
      expect(s.charged).toBeGreaterThan(0);
      expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 10_000_000n - BigInt(s.charged) * 4_000n });
    } finally {
      await only.stop();
    }
  });

  it("ends a cancelled job whose in-flight chunk fails for good: that chunk's rows are cancelled, free, and the job can be purged", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const created = await createJob(k, { numbers: numbers(80), checks: ["whatsapp"] }); // chunks 0 and 1; no worker runs
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(await claimChunk(gw.store.pool, id, 0, new Date(), 60_000)).not.toBeNull(); // a worker took chunk 0…
    expect((await gw.http().delete(`/v1/jobs/${id}`).set(bearer(k.key))).body).toMatchObject({ status: "cancelled", finished_at: null });
    // …and its processing failed for good.
    expect(await withTransaction(gw.store.pool, (c) => abandonCancelledChunk(c, id, 0, new Date()))).toMatchObject({ eventIds: [] });
    const job = (await gw.http().get(`/v1/jobs/${id}`).set(bearer(k.key))).body;
    expect(job).toMatchObject({ status: "cancelled", progress: { done: 80, conclusive: 0, non_billable: 80 } });
    expect(job.finished_at).not.toBeNull();
    const later = new Date(Date.now() + 3_600_000);
    expect(await staleChunks(gw.store.pool, later, later)).not.toContainEqual(expect.objectContaining({ job_id: id }));
    expect(await claimChunk(gw.store.pool, id, 0, new Date(), 60_000)).toBeNull();
    expect((await gw.http().delete(`/v1/jobs/${id}`).set(bearer(k.key))).body.purged_at).not.toBeNull();
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 10_000_000n });
  });

  it("keeps a chunk's committed work when Redis is away for its notices: the job goes on instead of failing", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const created = await createJob(k, { numbers: numbers(80), checks: ["whatsapp"] }); // chunks 0 and 1; no worker runs
    expect(created.status).toBe(201);
    // A worker whose Redis connection has just gone (it does not queue commands while away).
    const away = createRedis(gw.env.redisUrl, "producer", "worker-redis-away");
    await waitForRedis(away);
    const producer = new Producer(away, gw.deps.fleet);
    away.disconnect();
    const runner = new CheckRunner(null, "t").add(new VendorHttpSource("primary", "whatsapp", sim.url, "sim-key"), { timeoutMs: 2_000, concurrency: 2, retries: 0 });
    const ctx = { logger: createLogger("test", "silent"), store: gw.store, redis: away, producer, prefix: gw.env.redisPrefix, fleet: gw.deps.fleet, now: () => new Date() };
    await runJobChunk(ctx, { runner, cacheSecret: "cache-secret-for-this-test-0123456789", lease: { leaseMs: 20_000, renewEveryMs: 5_000 } }, created.body.id, 0);
    const job = (await gw.http().get(`/v1/jobs/${created.body.id}`).set(bearer(k.key))).body;
    expect(job).toMatchObject({ status: "running", failure: null, progress: { done: 50 } });
    await producer.close().catch(() => undefined);
  });

  it("finishes a job whose queue was emptied: the reconciler re-enqueues from Postgres", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const created = await createJob(k, { numbers: numbers(120), checks: ["whatsapp"] });
    expect(created.status).toBe(201);
    await deleteKeysUnder(gw.env.redisUrl, gw.env.redisPrefix);
    const [worker, ledger] = await Promise.all([startService("check-worker", gw.env, workerEnv()), startService("billing-ledger", gw.env, ledgerEnv)]);
    try {
      const final = await waitJob(k, created.body.id);
      expect(final).toMatchObject({ status: "completed", progress: { done: 120, checks_total: 120 } });
      await settled(k.accountId);
      const s = await settlementsOf(k.accountId);
      expect(s.charged + (s.released ?? 0)).toBe(120);
      expect((await reconcileAccount(gw.store.pool, k.accountId)).balanced).toBe(true);
    } finally {
      await Promise.all([worker.stop(), ledger.stop()]);
    }
  });
});
