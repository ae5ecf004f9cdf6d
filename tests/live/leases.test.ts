import { performance } from "node:perf_hooks";
import type { WorkerContext } from "@svc/service-runner";
import type { CheckResult } from "@svc/domain";
import { Worker, type Job } from "bullmq";
import { createRedis, queuePrefix, QUEUES } from "@svc/queues";
import { createLogger } from "@svc/process";
import { CheckRunner, VendorHttpSource } from "@svc/sources";
import { chunkRows, claimChunk, createStore, claimLiveLookup, completeChunk, completeLookup, pendingLookupRows, staleChunks, stalePendingLiveLookups, withTransaction } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { runJobChunk } from "../../services/check-worker/src/job-chunks";
import { runLiveLookup } from "../../services/check-worker/src/live-lookups";
import type { WorkDeps } from "../../services/check-worker/src/leased-work";
import { reconcileJobChunks, reconcileLiveLookups } from "../../services/check-worker/src/reconcile";
import { sweepReservations } from "../../services/billing-ledger/src/settle";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { deleteKeysUnder } from "../support/redis-keys";
import { eventually, spacedNumbers } from "../support/live";

/**
 * Leases against the real Postgres and Redis, with the worker's attempts run in
 * this process (so the test sees when each one stops) against a real vendor
 * simulator socket: a renewed lease keeps a slow attempt's work its own; a lost
 * one stops the attempt, and its late commit is refused.
 */
let gw: TestGateway;
let sim: Simulator;
let ctx: WorkerContext;
let runner: CheckRunner;
beforeAll(async () => {
  gw = await startTestGateway({ config: { JOB_CHUNK_ROWS: "50" } });
  sim = await startSimulator();
  runner = new CheckRunner(gw.deps.redis, gw.env.redisPrefix).add(new VendorHttpSource("primary", "whatsapp", sim.url, "sim-key"), { timeoutMs: 10_000, concurrency: 10, retries: 0 });
  await runner.advertise(600_000); // the gateway takes live checks only while a worker advertises their routes
  ctx = { logger: createLogger("leases-test", "silent"), store: gw.store, redis: gw.deps.redis, producer: gw.deps.producer, prefix: gw.env.redisPrefix, fleet: gw.deps.fleet, now: () => new Date() };
});
afterAll(async () => {
  await sim?.close();
  await gw?.close();
});
beforeEach(() => Object.assign(sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false }));

const cacheSecret = "cache-secret-for-the-lease-tests-0123456789";
const numbers = spacedNumbers(7);

/** Deps whose renewals the test can wait for. */
function leased(leaseMs: number, renewEveryMs: number) {
  let renewals = 0;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const deps: WorkDeps = {
    runner,
    cacheSecret,
    lease: { leaseMs, renewEveryMs },
    onRenewed: () => {
      renewals += 1;
      for (const w of waiters.filter((x) => renewals >= x.n)) w.resolve();
    },
  };
  const renewed = (n: number) => new Promise<void>((resolve) => (renewals >= n ? resolve() : waiters.push({ n, resolve })));
  return { deps, renewed };
}

/** A promise and whether it has settled yet. */
function tracked<T>(p: Promise<T>) {
  const t = { done: false, promise: p };
  void p.finally(() => (t.done = true)).catch(() => undefined);
  return t;
}

async function liveKey(): Promise<TestKey> {
  return accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
}

/** A one-chunk live job (no worker consumes this file's queue: the test runs the attempts). */
async function oneChunkJob(k: TestKey, rows = 40): Promise<string> {
  const created = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: numbers(rows), checks: ["whatsapp"] });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

const chunk = async (jobId: string, chunkNo = 0) =>
  (await gw.store.pool.query<{ status: string; attempts: number; leased_until: Date | null }>(`SELECT status, attempts, leased_until FROM job_chunks WHERE job_id = $1 AND chunk_no = $2`, [jobId, chunkNo])).rows[0];
const pendingJobRows = async (jobId: string) => (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM result_rows WHERE job_id = $1 AND pending_checks > 0`, [jobId])).rows[0]?.n;

/** Every pending check of `rows` answered, as a worker would write them. */
const answered = (rows: Array<{ row_no: number; checks: CheckResult[] }>) =>
  rows.map((r) => ({
    row_no: r.row_no,
    checks: r.checks.map((c): CheckResult => (c.status === "pending" ? { ...c, status: "ok", registered: true, attributes: null, cached: false, billed: true, checked_at: new Date().toISOString() } : c)),
  }));

describe("job chunk leases", () => {
  it("renewal keeps a slow chunk from being taken over: no claim and no reconciler gets it while its attempt runs", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    sim.settings.latencyMs = 4_000;
    const { deps, renewed } = leased(1_200, 200);
    const run = tracked(runJobChunk(ctx, deps, jobId, 0));
    await renewed(8); // > 1.6 s since the claim: a 1.2 s lease that was not renewed would have run out
    expect(run.done).toBe(false); // the vendor is still answering
    expect(await claimChunk(gw.store.pool, jobId, 0, new Date(), 1_200)).toBeNull(); // a second worker's claim
    expect(await staleChunks(gw.store.pool, new Date(), new Date(0))).not.toContainEqual(expect.objectContaining({ job_id: jobId })); // the reconciler's view
    await run.promise;
    expect(await chunk(jobId)).toMatchObject({ status: "done", attempts: 1 });
    expect(await pendingJobRows(jobId)).toBe(0);
  });

  it("a lost lease stops the attempt before its work is done, and its late commit is refused", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    sim.settings.latencyMs = 1_500;
    const { deps } = leased(1_200, 300);
    const asked = sim.stats.requests;
    const run = tracked(runJobChunk(ctx, deps, jobId, 0));
    await eventually(async () => sim.stats.requests > asked, 5_000, "vendor asked");
    const askedAt = performance.now(); // the vendor answers 1.5 s after this
    const answeredBefore = sim.stats.answered;
    // Another worker takes the chunk over, as it may once a lease has run out (forced out here).
    await gw.store.pool.query(`UPDATE job_chunks SET leased_until = $2 WHERE job_id = $1`, [jobId, new Date(Date.now() - 1_000)]);
    const takeover = await claimChunk(gw.store.pool, jobId, 0, new Date(), 60_000);
    expect(takeover?.attempts).toBe(2);
    await run.promise; // the first attempt's next renewal finds the chunk taken: it stops…
    expect(performance.now() - askedAt).toBeLessThan(1_500); // …before the vendor has even answered
    expect(await chunk(jobId)).toMatchObject({ status: "running", attempts: 2 });
    expect(await pendingJobRows(jobId)).toBe(40); // nothing of the first attempt was written

    // The first attempt's commit, late: refused. The attempt holding the lease commits.
    const rows = answered(await chunkRows(gw.store.pool, jobId, 1, 40));
    expect(await withTransaction(gw.store.pool, (c) => completeChunk(c, jobId, 0, 1, rows, new Date()))).toBeNull();
    expect(await pendingJobRows(jobId)).toBe(40);
    expect(await withTransaction(gw.store.pool, (c) => completeChunk(c, jobId, 0, 2, rows, new Date()))).toMatchObject({ finished: true });
    expect(await pendingJobRows(jobId)).toBe(0);
    // …and only once.
    expect(await withTransaction(gw.store.pool, (c) => completeChunk(c, jobId, 0, 2, rows, new Date()))).toBeNull();
    // The abandoned attempt's vendor call still ends (its answers are thrown away).
    await eventually(async () => sim.stats.answered >= answeredBefore + 40, 5_000, "abandoned call answered");
    expect(await pendingJobRows(jobId)).toBe(0);
    expect(await chunk(jobId)).toMatchObject({ status: "done", attempts: 2 });
  });

  it("an attempt that cannot renew stops while its lease still stands, so it has stopped before anyone else may start", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    sim.settings.latencyMs = 3_000;
    const { deps, renewed } = leased(1_200, 300);
    const answeredBefore = sim.stats.answered;
    const run = tracked(runJobChunk(ctx, deps, jobId, 0));
    await renewed(1);
    // Renewals now wait on a row lock: none gets through.
    const blocker = await gw.store.pool.connect();
    try {
      await blocker.query("BEGIN");
      const { rows } = await blocker.query<{ leased_until: Date }>(`SELECT leased_until FROM job_chunks WHERE job_id = $1 AND chunk_no = 0 FOR UPDATE`, [jobId]);
      const leaseEnd = (rows[0] as { leased_until: Date }).leased_until.getTime();
      await run.promise;
      expect(Date.now()).toBeLessThan(leaseEnd); // stopped before the lease it last wrote ran out
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    expect(await pendingJobRows(jobId)).toBe(40);
    // It gave the chunk back on its way out: taken over at once, not when the lease would have run out.
    await eventually(async () => (await claimChunk(gw.store.pool, jobId, 0, new Date(), 60_000)) ?? undefined, 2_000, "chunk claimable");
    await eventually(async () => sim.stats.answered >= answeredBefore + 40, 5_000, "abandoned call answered");
  });

  it("a failed attempt gives its chunk back after a 1 s back-off instead of holding it for the lease", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    const { deps } = leased(60_000, 15_000);
    // The attempt runs on a store of its own, whose connection the test cuts.
    const store = createStore({ databaseUrl: gw.env.databaseUrl, poolSize: 4, applicationName: "leases-test-worker" });
    sim.settings.latencyMs = 1_000;
    const run = tracked(runJobChunk({ ...ctx, store }, deps, jobId, 0));
    await eventually(async () => (await chunk(jobId))?.status === "running", 5_000, "claimed");
    const blocker = await gw.store.pool.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, [jobId]); // its commit will wait here…
      const { rows: pids } = await eventually(
        async () => {
          // Not on `blocker`: inside a transaction, pg_stat_activity is a snapshot taken once.
          const r = await gw.store.pool.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE application_name = 'leases-test-worker' AND wait_event_type = 'Lock' AND query LIKE 'UPDATE jobs j SET done%'`,
          );
          return r.rows.length > 0 ? r : undefined;
        },
        10_000,
        "commit waiting",
      );
      // …and its connection is cut: the attempt fails (08/57P01, transient).
      for (const { pid } of pids) await blocker.query(`SELECT pg_terminate_backend($1)`, [pid]);
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    await expect(run.promise).rejects.toThrow(/terminat/);
    await store.close();
    const after = await chunk(jobId);
    expect(after?.status).toBe("running");
    const backoff = (after?.leased_until as Date).getTime() - Date.now();
    expect(backoff).toBeLessThanOrEqual(1_000);
    expect(backoff).toBeGreaterThan(-5_000);
  });
});

/**
 * A worker takes messages from the checks queue until it has `id` (BullMQ: active,
 * locked to it for 10 minutes) and then dies; the others it took are put back.
 */
async function takeWithDeadWorker(id: string): Promise<void> {
  const fetcher = createRedis(gw.env.redisUrl, "worker", "leases-test-dead-worker");
  const dead = new Worker(QUEUES.checks, null, { connection: fetcher, prefix: queuePrefix(gw.env.redisPrefix, QUEUES.checks), autorun: false, lockDuration: 600_000 });
  const others: Job[] = [];
  try {
    for (;;) {
      const taken = (await dead.getNextJob("dead-worker-token", { block: false })) as Job | undefined;
      if (!taken) throw new Error(`${id} is not in the queue`);
      if (taken.id === id) break;
      others.push(taken);
    }
    for (const other of others) await other.moveToDelayed(Date.now(), "dead-worker-token");
  } finally {
    await dead.close(true);
    fetcher.disconnect();
  }
}

describe("reconcilers take over from Postgres, whatever Redis holds", () => {
  it("gives a chunk whose lease ran out a message of its own, even while a dead worker's message is still active", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    const queue = gw.deps.producer.queue(QUEUES.checks);
    // A worker took the chunk's message (BullMQ: active, locked to it), claimed the chunk and died.
    await takeWithDeadWorker(`chunk-${jobId}-0`);
    expect(await queue.getJobState(`chunk-${jobId}-0`)).toBe("active");
    expect(await claimChunk(gw.store.pool, jobId, 0, new Date(Date.now() - 10_000), 1_000)).not.toBeNull(); // its lease: run out
    await reconcileJobChunks(ctx, 10_000);
    const message = await queue.getJob(`chunk-${jobId}-0-a1`);
    expect(await message?.getState()).toBe("waiting");
    // A second sweep adds nothing while it waits; the message's run claims the chunk (claim 2).
    await reconcileJobChunks(ctx, 10_000);
    expect((await queue.getJobs(["waiting"])).filter((j) => j.id?.startsWith(`chunk-${jobId}-0`))).toHaveLength(1);
    const { deps } = leased(20_000, 5_000);
    await runJobChunk(ctx, deps, jobId, 0);
    expect(await chunk(jobId)).toMatchObject({ status: "done", attempts: 2 });
  });

  it("sends a sibling message when the takeover's own message went to a worker that died before claiming", async () => {
    const k = await liveKey();
    const jobId = await oneChunkJob(k);
    expect(await claimChunk(gw.store.pool, jobId, 0, new Date(Date.now() - 10_000), 1_000)).not.toBeNull(); // claimed; lease run out
    await deleteKeysUnder(gw.env.redisUrl, `${gw.env.redisPrefix}:bull`);
    await reconcileJobChunks(ctx, 1_000);
    const queue = gw.deps.producer.queue(QUEUES.checks);
    const takeover = `chunk-${jobId}-0-a1`;
    expect(await queue.getJobState(takeover)).toBe("waiting");
    await takeWithDeadWorker(takeover); // taken, never claimed: the chunk still shows 1 claim
    expect(await queue.getJobState(takeover)).toBe("active");
    await reconcileJobChunks(ctx, 1_000); // taken under a second ago: it may still be about to claim
    expect((await queue.getJobs(["waiting"])).filter((j) => j.id?.startsWith(takeover))).toHaveLength(0);
    await reconcileJobChunks(ctx, 0); // taken longer ago than the stale time, still unclaimed: its worker is gone
    const siblings = (await queue.getJobs(["waiting"])).filter((j) => j.id?.startsWith(`${takeover}-r`));
    expect(siblings).toHaveLength(1);
    await runJobChunk(ctx, leased(20_000, 5_000).deps, jobId, 0);
    expect(await chunk(jobId)).toMatchObject({ status: "done", attempts: 2 });
  });

  it("gives a live lookup whose run was lost a message of its own", async () => {
    const k = await liveKey();
    const created = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: numbers(2), checks: ["whatsapp"], wait: 0 });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    await deleteKeysUnder(gw.env.redisUrl, `${gw.env.redisPrefix}:bull`); // its message: lost with Redis
    expect(await claimLiveLookup(gw.store.pool, id, new Date(Date.now() - 10_000), 1_000)).toMatchObject({ attempts: 1 });
    expect(await stalePendingLiveLookups(gw.store.pool, new Date(), new Date(Date.now() - 10_000))).toContainEqual(expect.objectContaining({ id, attempts: 1, claimed: true }));
    await reconcileLiveLookups(ctx, 10_000);
    expect(await (await gw.deps.producer.queue(QUEUES.checks).getJob(`run-${id}-a1`))?.getState()).toBe("waiting");
  });
});

describe("live lookup leases", () => {
  async function pendingLookup(k: TestKey): Promise<string> {
    const created = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: numbers(3), checks: ["whatsapp"], wait: 0 });
    expect(created.status).toBe(202);
    return created.body.id as string;
  }
  const lookup = async (id: string) =>
    (await gw.store.pool.query<{ status: string; attempts: number }>(`SELECT status, attempts FROM lookups WHERE id = $1`, [id])).rows[0];

  it("renewal keeps a slow lookup's run its own until it completes", async () => {
    const k = await liveKey();
    sim.settings.latencyMs = 4_000;
    const id = await pendingLookup(k);
    const { deps, renewed } = leased(1_200, 200);
    const run = tracked(runLiveLookup(ctx, deps, id));
    await renewed(8); // past the 1.2 s the claim alone held
    expect(run.done).toBe(false);
    expect(await claimLiveLookup(gw.store.pool, id, new Date(), 1_200)).toBeNull();
    expect(await stalePendingLiveLookups(gw.store.pool, new Date(), new Date())).not.toContainEqual(expect.objectContaining({ id }));
    await run.promise;
    expect(await lookup(id)).toMatchObject({ status: "completed", attempts: 1 });
  });

  it("a lost lease stops the run, and its late completion is refused", async () => {
    const k = await liveKey();
    sim.settings.latencyMs = 1_500;
    const id = await pendingLookup(k);
    const asked = sim.stats.requests;
    const { deps } = leased(1_200, 300);
    const run = tracked(runLiveLookup(ctx, deps, id));
    await eventually(async () => sim.stats.requests > asked, 5_000, "vendor asked");
    const askedAt = performance.now();
    const answeredBefore = sim.stats.answered;
    await gw.store.pool.query(`UPDATE lookups SET leased_until = $2 WHERE id = $1`, [id, new Date(Date.now() - 1_000)]);
    expect(await claimLiveLookup(gw.store.pool, id, new Date(), 60_000)).toMatchObject({ attempts: 2 });
    await run.promise;
    expect(performance.now() - askedAt).toBeLessThan(1_500); // stopped before the vendor answered
    expect(await lookup(id)).toMatchObject({ status: "pending", attempts: 2 });
    const rows = answered(await pendingLookupRows(gw.store.pool, id));
    expect(await withTransaction(gw.store.pool, (c) => completeLookup(c, id, rows, new Date(), 1))).toBeNull();
    expect(await lookup(id)).toMatchObject({ status: "pending" });
    expect(await withTransaction(gw.store.pool, (c) => completeLookup(c, id, rows, new Date(), 2))).not.toBeNull();
    expect(await lookup(id)).toMatchObject({ status: "completed" });
    await eventually(async () => sim.stats.answered >= answeredBefore + 3, 5_000, "abandoned call answered");
    expect(await lookup(id)).toMatchObject({ status: "completed", attempts: 2 });
  });
});

describe("settlement sweep", () => {
  it("settles a finished chunk of a running job whose settlement message was lost, before the job ends", async () => {
    const k = await liveKey();
    const created = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: numbers(80), checks: ["whatsapp"] }); // chunks 0 and 1
    expect(created.status).toBe(201);
    const jobId = created.body.id as string;
    await runJobChunk(ctx, leased(20_000, 5_000).deps, jobId, 0);
    await deleteKeysUnder(gw.env.redisUrl, `${gw.env.redisPrefix}:bull`); // its settle.reservation message: gone
    const settledRows = async () =>
      (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.job_id = $1`, [jobId])).rows[0]?.n;
    expect(await settledRows()).toBe(0);
    await sweepReservations(ctx, 0);
    expect(await settledRows()).toBe(50); // chunk 0's rows, while chunk 1 still waits
    const job = (await gw.http().get(`/v1/jobs/${jobId}`).set(bearer(k.key))).body;
    expect(job.status).toBe("running");
    expect(Number(job.cost.charged.amount)).toBeGreaterThan(0);
    await sweepReservations(ctx, 0); // nothing twice
    expect(await settledRows()).toBe(50);
  });
});
