import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { queuePrefix, QUEUES, slotOf } from "@svc/queues";
import { routesKey } from "@svc/sources";
import { reconcileAccount } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { createTestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers } from "../support/live";
import { runClusterDir, startCluster, stopCluster } from "../support/redis-cluster";

/**
 * A Redis Cluster master dies (SIGKILL) while a live job runs through the real fleet
 * (this file's own gateway, check-worker and billing-ledger processes on a local
 * 3-master + 3-replica cluster of their own): the master holding the checks queue's
 * slot, with chunks running and chunks still queued on it. Its replica takes over
 * (cluster-node-timeout 1 s); what the failover lost is rebuilt from Postgres by the
 * sweeps. The job completes, every row is answered once, and the money is exact.
 */
const numbers = spacedNumbers(11);
const micros = (amount: string): bigint => BigInt(Math.round(Number(amount) * 1e6));
const TOP_UP = 10_000_000n;

let dir: string;
let gw: TestGateway;
let sim: Simulator;
let worker: RunningService | undefined;
let ledger: RunningService | undefined;

jest.setTimeout(120_000);

beforeAll(async () => {
  dir = `${runClusterDir()}-failover`;
  const redisUrl = startCluster(dir);
  sim = await startSimulator();
  gw = await startTestGateway({ env: { ...(await createTestEnv()), redisUrl }, config: { JOB_CHUNK_ROWS: "50" } });
  const env = gw.env;
  [worker, ledger] = await Promise.all([
    startService("check-worker", env, {
      VENDOR_PRIMARY_URL: sim.url,
      VENDOR_PRIMARY_KEY: "sim-key",
      VENDOR_RETRIES: "0",
      // Two chunks at a time: the others wait in the queue on the master that dies.
      CONCURRENCY: "2",
      WORK_LEASE_MS: "2000",
      WORK_LEASE_RENEW_MS: "500",
      SWEEP_INTERVAL_MS: "250",
      CHUNK_STALE_MS: "1000",
      LOOKUP_STALE_MS: "1000",
      JOB_LOCK_MS: "3000",
    }),
    startService("billing-ledger", env, { SWEEP_INTERVAL_MS: "500", SWEEP_GRACE_MS: "1000", JOB_LOCK_MS: "3000" }),
  ]);
  await eventually(async () => gw.deps.redis.get(routesKey(env.redisPrefix, "whatsapp")), 20_000, "routes advertised");
}, 120_000);

afterAll(async () => {
  await Promise.all([worker?.stop(), ledger?.stop()]);
  await sim?.close();
  await gw?.close();
  if (dir) stopCluster(dir);
});

/**
 * The cluster master serving `key`'s slot, as the cluster itself reports it (CLUSTER
 * NODES asked of a live node), and its pid (the cluster's ports and pids are in its directory).
 */
function masterFor(key: string, skipPort?: number): { port: number; pid: number } {
  const state = JSON.parse(readFileSync(path.join(dir, "cluster.json"), "utf8")) as { ports: number[]; pids: number[] };
  const slot = slotOf(key);
  for (const asked of state.ports.filter((p) => p !== skipPort)) {
    const out = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(asked), "cluster", "nodes"], { encoding: "utf8", timeout: 5_000 }).stdout ?? "";
    for (const line of out.split("\n")) {
      const [, address, flags, , , , , link, ...ranges] = line.split(" ");
      if (!address || !flags?.includes("master") || flags.includes("fail") || link !== "connected") continue;
      const serves = ranges.some((r) => {
        const [from, to] = r.split("-").map(Number);
        return from !== undefined && slot >= from && slot <= (to ?? from);
      });
      if (!serves) continue;
      const port = Number(/:(\d+)@/.exec(address)?.[1]);
      const pid = state.pids[state.ports.indexOf(port)];
      if (pid === undefined) throw new Error(`no pid for port ${port}`);
      return { port, pid };
    }
  }
  throw new Error(`no live master reported for slot ${slot}`);
}

const chunkStates = async (jobId: string) => {
  const { rows } = await gw.store.pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM job_chunks WHERE job_id = $1 GROUP BY status`, [jobId]);
  return Object.fromEntries(rows.map((r) => [r.status, r.n])) as Record<string, number>;
};

/** Every results page of the job: each row once, and what was billed at the estimate's prices. */
async function results(k: TestKey, id: string, prices: Map<string, bigint>) {
  const rowNos: number[] = [];
  const answers: string[] = [];
  let billed = 0n;
  let after: string | null = null;
  do {
    const res: { status: number; body: { data: Array<{ row_no: number; checks: Array<{ service: string; status: string; billed: boolean }> }>; next_cursor: string | null } } = await gw
      .http()
      .get(`/v1/jobs/${id}/results`)
      .query({ limit: 1000, ...(after ? { after } : {}) })
      .set(bearer(k.key));
    expect(res.status).toBe(200);
    for (const row of res.body.data) {
      rowNos.push(row.row_no);
      expect(row.checks.map((c) => c.service)).toEqual(["whatsapp"]);
      for (const c of row.checks) {
        answers.push(c.status);
        if (c.billed) billed += prices.get(c.service) as bigint;
      }
    }
    after = res.body.next_cursor;
  } while (after);
  return { rowNos, answers, billed };
}

it("SIGKILL of the master holding the checks queue mid-job: the job completes, every row answered once, money exact", async () => {
  const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: TOP_UP });
  sim.settings.latencyMs = 800; // each chunk is one vendor call of this long: the job runs for seconds
  const created = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: numbers(300), checks: ["whatsapp"] });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const prices = new Map<string, bigint>(created.body.estimate.by_check.map((b: { service: string; unit_price: { amount: string } }) => [b.service, micros(b.unit_price.amount)]));

  // Two chunks at the vendor, four waiting in the queue: now the queue's master dies.
  const before = await eventually(async () => {
    const states = await chunkStates(id);
    return states.running === 2 ? states : undefined;
  }, 20_000, "two chunks running");
  expect(before.queued ?? 0).toBeGreaterThan(0); // messages wait on the master about to die
  const queueKey = `${queuePrefix(gw.env.redisPrefix, QUEUES.checks)}:${QUEUES.checks}:wait`;
  const victim = masterFor(queueKey);
  process.kill(victim.pid, "SIGKILL");
  sim.settings.latencyMs = 100;

  const finished = await eventually(
    async () => (await gw.store.pool.query<{ status: string; finished_at: Date | null }>(`SELECT status, finished_at FROM jobs WHERE id = $1`, [id])).rows[0]?.finished_at ?? undefined,
    90_000,
    "job finished after the failover",
  );
  expect(finished).toBeInstanceOf(Date);
  // The slot is served again, by the promoted replica on another port.
  expect(masterFor(queueKey, victim.port).port).not.toBe(victim.port);
  expect(await chunkStates(id)).toEqual({ done: 6 });

  // Every row once, each with its one answer (none left pending).
  const got = await results(k, id, prices);
  expect(got.rowNos).toHaveLength(300);
  expect(new Set(got.rowNos).size).toBe(300);
  expect(got.answers.filter((s) => s === "pending")).toEqual([]);

  // Money: balance = top-up - exactly what the answers cost, nothing reserved, ledger balanced.
  await eventually(async () => ((await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros === 0n ? true : undefined), 30_000, "settled");
  const job = await gw.http().get(`/v1/jobs/${id}`).set(bearer(k.key));
  expect(job.body.status).toBe("completed");
  expect(micros(job.body.cost.charged.amount)).toBe(got.billed);
  expect(got.billed).toBeGreaterThan(0n);
  const books = await reconcileAccount(gw.store.pool, k.accountId);
  expect(books).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: TOP_UP - got.billed });
  // Each charge and release once: settlements never double-count across the failover.
  const { rows } = await gw.store.pool.query<{ charged: string | null; settled: number }>(
    `SELECT sum(s.amount_micros) FILTER (WHERE s.outcome = 'charged')::text AS charged, count(*)::int AS settled
     FROM settlements s JOIN reservations r ON r.id = s.reservation_id WHERE r.job_id = $1`,
    [id],
  );
  expect(BigInt(rows[0]?.charged ?? "0")).toBe(got.billed);
  expect(rows[0]?.settled).toBe(300);
});
