import { DEFAULT_SCOPES } from "@svc/domain";
import { reconcileAccount } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers } from "../support/live";
import { createTestCertificates, LOOPBACK, verifyDelivery, WebhookReceiver } from "../support/webhooks";
import type { ReceivedRequest } from "../../packages/webhooks/src/testing/receiver";
import { routesKey } from "@svc/sources";

/**
 * A job's final status and its final cost are one fact: through the real fleet
 * (gateway, check-worker, billing-ledger, webhook-dispatcher), the first response
 * that shows a job finished — by tight polling, by long poll, at the job.completed
 * delivery — already shows every billed answer charged at its price and nothing
 * reserved; for a cancelled job too; and with the billing-ledger killed mid-job.
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let gw: TestGateway;
let sim: Simulator;
let worker: RunningService;
let ledger: RunningService;
let dispatcher: RunningService;
const numbers = spacedNumbers(7);
const MANAGE = [...DEFAULT_SCOPES, "webhooks:manage" as const];
const ledgerEnv = { SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_MS: "300", JOB_LOCK_MS: "1500" };
// One chunk at a time, so a cancel finds chunks in flight and chunks not yet sent.
const workerEnv = { VENDOR_PRIMARY_URL: "", VENDOR_PRIMARY_KEY: "sim-key", VENDOR_RETRIES: "0", CONCURRENCY: "1", JOB_LOCK_MS: "1500", CHUNK_STALE_MS: "1000", SWEEP_INTERVAL_MS: "500", WORK_LEASE_MS: "3000", WORK_LEASE_RENEW_MS: "1000" };

beforeAll(async () => {
  await receiver.start();
  sim = await startSimulator();
  gw = await startTestGateway({ config: { JOB_CHUNK_ROWS: "20", WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK } });
  [worker, ledger, dispatcher] = await Promise.all([
    startService("check-worker", gw.env, { ...workerEnv, VENDOR_PRIMARY_URL: sim.url }),
    startService("billing-ledger", gw.env, ledgerEnv),
    startService("webhook-dispatcher", gw.env, { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, WEBHOOK_EXTRA_CA_FILE: certs.caFile, WEBHOOK_TIMEOUT_MS: "1500", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_MS: "500" }),
  ]);
  await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes");
}, 60_000);
afterAll(async () => {
  await Promise.all([worker?.stop(), ledger?.stop(), dispatcher?.stop()]);
  await receiver.close();
  await sim?.close();
  await gw?.close();
});
beforeEach(() => Object.assign(sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false }));

type Job = { id: string; status: string; finished_at: string | null; progress: { conclusive: number; checks_total: number; done: number }; cost: { reserved: { amount: string }; charged: { amount: string } } };
type Envelope = { type: string; data: { id: string } };

const micros = (amount: string): bigint => BigInt(Math.round(Number(amount) * 1e6));
const read = (k: TestKey, id: string, wait = 0) => gw.http().get(`/v1/jobs/${id}?wait=${wait}`).set(bearer(k.key));
const getJob = async (k: TestKey, id: string, wait = 0): Promise<Job> => {
  const res = await read(k, id, wait);
  expect(res.status).toBe(200);
  return res.body as Job;
};

/**
 * Keys of the account that read all its jobs. A key is limited to 10 requests a
 * second (bursts of 20): each observer gets keys of its own, and tight polling
 * goes round several.
 */
const readers = (k: TestKey, n: number): Promise<TestKey[]> =>
  Promise.all(Array.from({ length: n }, () => accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: k.accountId, scopes: ["jobs:read", "jobs:read_all"] })));
const isCompletedEvent = (path: string) => (r: ReceivedRequest) => r.path === path && (JSON.parse(r.body) as Envelope).type === "job.completed";
const finished = (j: Job) => ["completed", "failed", "cancelled"].includes(j.status) && j.finished_at !== null;
const cost = (j: Job) => ({ reserved: micros(j.cost.reserved.amount), charged: micros(j.cost.charged.amount) });

/** GETs without pause (round several keys; a rate-limited answer is skipped) until the job reads finished: the first such response. */
async function pollTightly(keys: TestKey[], id: string, timeoutMs = 30_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i += 1) {
    const res = await read(keys[i % keys.length] as TestKey, id);
    if (res.status === 429) await new Promise((r) => setTimeout(r, 5));
    else if (res.status !== 200) throw new Error(`GET job answered ${res.status}`);
    else if (finished(res.body as Job)) return res.body as Job;
    if (Date.now() > deadline) throw new Error(`job ${id} not finished within ${timeoutMs} ms`);
  }
}

/** Long polls (GET ?wait) until the job reads finished: the response that first says so. */
async function longPoll(k: TestKey, id: string, timeoutMs = 30_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await getJob(k, id, 10);
    if (["completed", "failed", "cancelled"].includes(job.status)) return job; // whatever the first final-looking answer shows
    if (Date.now() > deadline) throw new Error(`job ${id} not finished within ${timeoutMs} ms`);
  }
}

/** The cost the job must show once final: every billed answer (from its results) at its unit price (from its estimate). */
async function billedCost(k: TestKey, id: string, prices: Map<string, bigint>): Promise<{ micros: bigint; billed: number }> {
  let total = 0n;
  let billed = 0;
  let after: string | null = null;
  do {
    const page: { body: { data: Array<{ checks: Array<{ service: string; billed: boolean }> }>; next_cursor: string | null } } = await gw
      .http()
      .get(`/v1/jobs/${id}/results`)
      .query({ limit: 1000, ...(after ? { after } : {}) })
      .set(bearer(k.key));
    for (const row of page.body.data) {
      for (const c of row.checks) {
        if (!c.billed) continue;
        billed += 1;
        total += prices.get(c.service) as bigint;
      }
    }
    after = page.body.next_cursor;
  } while (after);
  return { micros: total, billed };
}

async function createJob(k: TestKey, body: Record<string, unknown>): Promise<{ id: string; prices: Map<string, bigint> }> {
  const res = await gw.http().post("/v1/jobs").set(bearer(k.key)).send(body);
  expect(res.status).toBe(201);
  const prices = new Map<string, bigint>(res.body.estimate.by_check.map((b: { service: string; unit_price: { amount: string } }) => [b.service, micros(b.unit_price.amount)]));
  return { id: res.body.id, prices };
}

/** An endpoint made through the API and verified by the running dispatcher. */
async function verifiedEndpoint(k: TestKey, path: string): Promise<{ id: string; secret: string }> {
  const made = await gw.http().post("/v1/webhook_endpoints").set(bearer(k.key)).send({ url: receiver.url(path), events: ["job.completed"] });
  expect(made.status).toBe(201);
  await eventually(async () => {
    const list = await gw.http().get("/v1/webhook_endpoints").set(bearer(k.key));
    return list.body.data.find((e: { id: string; status: string }) => e.id === made.body.id && e.status === "active");
  }, 15_000, "endpoint active");
  return { id: made.body.id, secret: made.body.secret };
}

/** At each job.completed delivery to `path`, before answering it: the job as GET shows it then. */
function readJobAtDelivery(k: TestKey, path: string): Map<string, Job> {
  const seen = new Map<string, Job>();
  receiver.reply = async (r: ReceivedRequest, res) => {
    const body = JSON.parse(r.body) as Envelope;
    if (r.path === path && body.type === "job.completed" && !seen.has(body.data.id)) seen.set(body.data.id, await getJob(k, body.data.id));
    res.writeHead(200).end("ok");
  };
  return seen;
}

/** Every final observation shows the final cost: charged = billed answers at their prices, nothing reserved. */
function expectFinalCost(observed: Job, expected: bigint): void {
  expect({ id: observed.id, status: observed.status, finished: observed.finished_at !== null, ...cost(observed) }).toEqual({
    id: observed.id,
    status: observed.status,
    finished: true,
    reserved: 0n,
    charged: expected,
  });
}

const settlementsOf = async (accountId: string) => {
  const { rows } = await gw.store.pool.query<{ outcome: string; n: number }>(
    `SELECT s.outcome, count(*)::int AS n FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.account_id = $1 GROUP BY 1`,
    [accountId],
  );
  return Object.fromEntries(rows.map((r) => [r.outcome, r.n])) as Record<string, number>;
};

describe("a job reads completed only with its final cost", () => {
  it("by tight polling, by long poll and at the job.completed delivery: charged = billed answers at their prices, nothing reserved", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", scopes: MANAGE, balanceMicros: 10_000_000n });
    const [waiter, counter, hookReader, ...pollers] = (await readers(k, 7)) as [TestKey, TestKey, TestKey, ...TestKey[]];
    const hook = await verifiedEndpoint(k, "/final-cost");
    const atDelivery = readJobAtDelivery(hookReader, "/final-cost");
    sim.settings.latencyMs = 50;
    const { id, prices } = await createJob(k, { numbers: [...numbers(58), "not a number", "+14155551000", "+14155551000"], checks: ["whatsapp", "carrier"], webhook_endpoint_id: hook.id });
    const [tight, long] = await Promise.all([pollTightly(pollers, id), longPoll(waiter, id)]);
    const expected = await billedCost(counter, id, prices);
    expect(expected.billed).toBeGreaterThan(0);
    expect(tight.status).toBe("completed");
    expectFinalCost(tight, expected.micros);
    expectFinalCost(long, expected.micros);
    expect(tight.progress.conclusive).toBe(expected.billed);

    const delivery = await receiver.waitFor(isCompletedEvent("/final-cost"), 1, 15_000);
    expect(verifyDelivery<Envelope>(hook.secret, delivery)).toMatchObject({ type: "job.completed", data: { id } });
    expectFinalCost(await eventually(async () => atDelivery.get(id), 5_000, "job read at delivery"), expected.micros);

    // The billing-ledger's own settlement of each chunk, before or after, billed nothing twice.
    const all = tight.progress.checks_total;
    await eventually(async () => {
      const s = await settlementsOf(k.accountId);
      return (s.charged ?? 0) + (s.released ?? 0) === all;
    }, 5_000, "every check settled");
    expect((await settlementsOf(k.accountId)).charged).toBe(expected.billed);
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 10_000_000n - expected.micros });
  }, 60_000);

  it("a cancelled job reads finished only with its final cost: rows in flight billed, the rest released; at once when nothing is in flight", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const [waiter, counter, ...pollers] = (await readers(k, 6)) as [TestKey, TestKey, ...TestKey[]];
    sim.settings.latencyMs = 700;
    const before = sim.stats.requests;
    const running = await createJob(k, { numbers: numbers(100), checks: ["whatsapp"] }); // 5 chunks, one at a time
    await eventually(async () => sim.stats.requests > before, 10_000, "first chunk sent");
    // A second job whose chunks wait behind the first's: nothing of it is in flight.
    const waiting = await createJob(k, { numbers: numbers(40), checks: ["whatsapp"] });
    const idle = await gw.http().delete(`/v1/jobs/${waiting.id}`).set(bearer(k.key));
    expect(idle.status).toBe(200);
    expectFinalCost(idle.body as Job, 0n);

    const cancelled = await gw.http().delete(`/v1/jobs/${running.id}`).set(bearer(k.key));
    expect(cancelled.body).toMatchObject({ status: "cancelled", finished_at: null }); // its first chunk is still in flight
    expect(cost(cancelled.body as Job).reserved).toBeGreaterThan(0n);
    const [tight, long] = await Promise.all([pollTightly(pollers, running.id), longPoll(waiter, running.id)]);
    const expected = await billedCost(counter, running.id, running.prices);
    expect(expected.billed).toBeGreaterThan(0); // the chunk in flight finished and is billed
    expect(expected.billed).toBeLessThan(100);
    expect(tight).toMatchObject({ status: "cancelled", progress: { done: 100 } });
    expectFinalCost(tight, expected.micros);
    expectFinalCost(long, expected.micros);
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 10_000_000n - expected.micros });
  }, 60_000);

  it("with the billing-ledger killed (-9) mid-job: completed with its final cost all the same; the recovered ledger bills nothing twice", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", scopes: MANAGE, balanceMicros: 10_000_000n });
    const [waiter, counter, hookReader, probe, ...pollers] = (await readers(k, 8)) as [TestKey, TestKey, TestKey, TestKey, ...TestKey[]];
    const hook = await verifiedEndpoint(k, "/ledger-dead");
    const atDelivery = readJobAtDelivery(hookReader, "/ledger-dead");
    sim.settings.latencyMs = 600;
    const { id, prices } = await createJob(k, { numbers: numbers(60), checks: ["whatsapp", "carrier"], webhook_endpoint_id: hook.id });
    // The first chunk committed (and its settlement queued), then the ledger dies.
    await eventually(async () => {
      const res = await read(probe, id);
      return res.status === 200 && (res.body as Job).progress.done > 0;
    }, 15_000, "first chunk committed");
    await ledger.stop("SIGKILL");
    try {
      const [tight, long] = await Promise.all([pollTightly(pollers, id), longPoll(waiter, id)]);
      const expected = await billedCost(counter, id, prices);
      expect(tight.status).toBe("completed");
      expectFinalCost(tight, expected.micros);
      expectFinalCost(long, expected.micros);
      await receiver.waitFor(isCompletedEvent("/ledger-dead"), 1, 15_000);
      expectFinalCost(await eventually(async () => atDelivery.get(id), 5_000, "job read at delivery"), expected.micros);

      // The ledger comes back: its queued chunk settlements and its sweep find nothing left to bill.
      ledger = await startService("billing-ledger", gw.env, ledgerEnv);
      await new Promise((r) => setTimeout(r, 1_000)); // a few sweeps and the queued messages
      const s = await settlementsOf(k.accountId);
      expect(s.charged).toBe(expected.billed);
      expect((s.charged ?? 0) + (s.released ?? 0)).toBe(120);
      expectFinalCost(await getJob(counter, id), expected.micros);
      expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 10_000_000n - expected.micros });
    } finally {
      if (ledger.child.exitCode !== null || ledger.child.signalCode !== null) ledger = await startService("billing-ledger", gw.env, ledgerEnv);
    }
  }, 60_000);
});

describe("deleting the results of a job finished with its reservation still open (finished by an earlier release)", () => {
  /** A finished live job; `reopen` then makes its reservation open again, as one finished before jobs were settled at their finish. */
  async function finishedJob(k: TestKey): Promise<string> {
    const { id } = await createJob(k, { numbers: numbers(20), checks: ["whatsapp"] });
    await eventually(async () => finished(await getJob(k, id)), 15_000, "job finished");
    return id;
  }
  const reopen = (id: string) => gw.store.pool.query(`UPDATE reservations SET status = 'open', closed_at = NULL WHERE job_id = $1`, [id]);
  const rowsOf = async (id: string) => (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM result_rows WHERE job_id = $1`, [id])).rows[0]?.n;

  it("is settled by the check-worker first, then purged, in the one DELETE (the gateway settles nothing itself)", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const id = await finishedJob(k);
    await reopen(id);
    const res = await gw.http().delete(`/v1/jobs/${id}`).set(bearer(k.key));
    expect(res.status).toBe(200);
    expect(res.body.purged_at).not.toBeNull();
    expect(await rowsOf(id)).toBe(0);
    const { rows } = await gw.store.pool.query<{ status: string }>(`SELECT status FROM reservations WHERE job_id = $1`, [id]);
    expect(rows).toEqual([{ status: "closed" }]);
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n });
  }, 30_000);

  it("with nothing to settle it (no check-worker, no billing-ledger's sweep), answers 503 (retryable) and deletes nothing: never a 200 that kept the rows", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const id = await finishedJob(k);
    // Stopped before the reservation is reopened: the ledger's sweep would settle it again at once.
    await Promise.all([worker.stop(), ledger.stop()]);
    await reopen(id);
    const res = await gw.http().delete(`/v1/jobs/${id}`).set(bearer(k.key));
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("temporarily_unavailable");
    expect(res.headers["retry-after"]).toBe("5");
    expect(await rowsOf(id)).toBeGreaterThan(0);
  }, 30_000);
});
