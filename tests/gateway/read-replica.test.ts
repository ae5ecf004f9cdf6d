import pg from "pg";
import { metrics } from "@svc/metrics";
import { bearer, type TestKey } from "../support/fixtures";
import { createTestEnv, type TestEnv } from "../support/env";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { cloneDatabase, databaseUrl, withAdmin } from "../support/pg-admin";
import { freePort, PostgresRelay, until } from "../observability/support";
import { jobsApi, parseCsv, TEST } from "../jobs/helpers";

/**
 * DATABASE_REPLICA_URL through the running gateway. The "replica" is a database of
 * our own: a copy of the test database taken at one moment (so anything written
 * after it is missing there, as on a replica that has not replayed it yet), whose
 * result rows we then mark (`input_masked` = REPLICA), so every answer shows which
 * database it came from. It also stands in for a replica that is behind on one job:
 * its copy of that job is made unfinished again.
 */
const REPLICA = "from-the-replica";

let env: TestEnv;
let replicaDb: string;
let replicaUrl: string;
let relay: PostgresRelay;
let gw: TestGateway;
let owner: TestKey;
/** The key the running test calls with (see beforeEach). */
let key: string;
let completedLookup: string;
let slowLookup: string;
let finishedJob: string;
let lateJob: string;

const lookup = (body: object) => gw.http().post("/v1/lookup").set(bearer(key)).send({ wait: 0, ...body });
const getLookup = (id: string) => gw.http().get(`/v1/lookups/${id}`).set(bearer(key));
const inputs = (body: { results: Array<{ input: string }> }) => body.results.map((r) => r.input);
const usage = () => gw.http().get("/v1/usage").query({ from: today(), to: today(), group_by: "check" }).set(bearer(key));
const today = () => new Date().toISOString().slice(0, 10);

async function readsBy(read: string, target: string): Promise<number> {
  const m = await metrics.dbReads().get();
  return m.values.find((v) => v.labels.read === read && v.labels.target === target)?.value ?? 0;
}

async function fallbacksBy(read: string, reason: string): Promise<number> {
  const m = await metrics.replicaFallbacks().get();
  return m.values.find((v) => v.labels.read === read && v.labels.reason === reason)?.value ?? 0;
}

async function onReplica<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: replicaUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  env = await createTestEnv();
  // What exists before the copy: a completed lookup, a slow one (pending for 20 s), a finished job, another finished job, usage.
  const first = await startTestGateway({ env });
  gw = first;
  const api = jobsApi(first);
  owner = await api.newKey();
  key = owner.key;
  const done = await lookup({ numbers: [TEST.clean], checks: ["spam"] });
  expect({ status: done.status, body: done.body }).toMatchObject({ status: 200, body: { status: "completed" } });
  completedLookup = done.body.id;
  const slow = await lookup({ numbers: ["+12025550109"], checks: ["spam"] });
  expect(slow.status).toBe(202);
  slowLookup = slow.body.id;
  for (const name of ["finished", "late"] as const) {
    const job = await api.create(key, { numbers: [TEST.clean, TEST.scam, TEST.canada], emails: [TEST.deliverable], checks: ["spam", "email"] });
    expect(job.status).toBe(201);
    expect((await api.get(key, job.body.id)).body.status).toBe("completed");
    if (name === "finished") finishedJob = job.body.id;
    else lateJob = job.body.id;
  }
  await first.close();

  const primaryDb = new URL(env.databaseUrl).pathname.slice(1);
  replicaDb = `${primaryDb}_replica`;
  await cloneDatabase(primaryDb, replicaDb);
  replicaUrl = databaseUrl(replicaDb);
  await onReplica(async (c) => {
    await c.query(`UPDATE result_rows SET input_masked = $1`, [REPLICA]);
    // This replica has not replayed the commit that finished `lateJob` yet.
    await c.query(`UPDATE jobs SET status = 'running', finished_at = NULL WHERE id = $1`, [lateJob]);
    await c.query(`UPDATE daily_usage SET checks = checks + 1000 WHERE account_id = $1`, [owner.accountId]);
  });
  // The gateway reaches the replica through a relay the test can cut.
  relay = new PostgresRelay({ host: "127.0.0.1", port: Number(new URL(replicaUrl).port || 5432) });
  await relay.start();
  gw = await startTestGateway({ env, config: { DATABASE_REPLICA_URL: relay.urlFor(replicaUrl) } });
});

// Each test calls with a key of its own on the owner's account: one key's budget (10 requests/s,
// burst 20, as the spec sets it) would not last a busy run of the whole file.
beforeEach(async () => {
  key = (await jobsApi(gw).newKey({ accountId: owner.accountId })).key;
});

afterAll(async () => {
  await gw?.close();
  await relay?.cut();
  await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${replicaDb}" WITH (FORCE)`)).catch(() => undefined);
});

describe("with a read replica that is reachable and current", () => {
  it("a completed lookup is read from the replica", async () => {
    const before = await readsBy("lookup", "replica");
    const res = await getLookup(completedLookup);
    expect({ status: res.status, lookup: res.body.status, inputs: inputs(res.body) }).toEqual({ status: 200, lookup: "completed", inputs: [REPLICA] });
    expect(await readsBy("lookup", "replica")).toBe(before + 1);
  });

  it("a read finding every replica connection busy (downloads streaming) goes to the primary at once and leaves the replica in use", async () => {
    const replica = gw.store.replica as pg.Pool;
    const held = await Promise.all(Array.from({ length: replica.options.max ?? 10 }, () => replica.connect()));
    const busyBefore = await fallbacksBy("lookup", "busy");
    try {
      const res = await getLookup(completedLookup);
      expect({ status: res.status, lookup: res.body.status }).toEqual({ status: 200, lookup: "completed" });
      expect(inputs(res.body)).not.toContain(REPLICA);
      expect(await fallbacksBy("lookup", "busy")).toBe(busyBefore + 1);
    } finally {
      for (const c of held) c.release();
    }
    // Not set aside: the next read uses the replica without waiting for a probe.
    expect(inputs((await getLookup(completedLookup)).body)).toEqual([REPLICA]);
  });

  it("a lookup just created (not on the replica yet) is read from the primary, not answered 404", async () => {
    const created = await lookup({ numbers: [TEST.scam], checks: ["spam"] });
    expect(created.status).toBe(200);
    const res = await getLookup(created.body.id);
    expect({ status: res.status, lookup: res.body.status, id: res.body.id }).toEqual({ status: 200, lookup: "completed", id: created.body.id });
    expect(inputs(res.body)).not.toContain(REPLICA);
  });

  it("a pending lookup is read from the primary: pending there, and completed there while the replica still has it pending", async () => {
    const pending = await getLookup(slowLookup);
    expect({ status: pending.status, lookup: pending.body.status }).toEqual({ status: 200, lookup: "pending" });
    expect(inputs(pending.body)).not.toContain(REPLICA);
    // Past its completion time the primary's read completes it; the replica's copy stays pending.
    gw.setNow(new Date(Date.now() + 25_000));
    try {
      const res = await getLookup(slowLookup);
      expect({ status: res.status, lookup: res.body.status }).toEqual({ status: 200, lookup: "completed" });
      expect(inputs(res.body)).not.toContain(REPLICA);
    } finally {
      gw.setNow(null);
    }
    const there = await onReplica((c) => c.query(`SELECT status FROM lookups WHERE id = $1`, [slowLookup]));
    expect(there.rows[0].status).toBe("pending");
  });

  it("a finished job's result pages and download come from the replica once it has replayed the finish", async () => {
    const api = jobsApi(gw);
    const before = await readsBy("results", "replica");
    const page = await api.results(key, finishedJob, { limit: 2 });
    expect(page.status).toBe(200);
    expect(page.body.data.map((r: { input: string }) => r.input)).toEqual([REPLICA, REPLICA]);
    // The cursor works across pages served by the replica.
    const next = await api.results(key, finishedJob, { limit: 10, after: page.body.next_cursor });
    expect(next.body.data.map((r: { row_no: number; input: string }) => [r.row_no, r.input])).toEqual([
      [3, REPLICA],
      [4, REPLICA],
    ]);
    expect(await readsBy("results", "replica")).toBe(before + 2);
    const csv = await download(finishedJob);
    expect(csv.map((r) => r.input_masked)).toEqual([REPLICA, REPLICA, REPLICA, REPLICA]);
  });

  it("a job the replica has not caught up with (unfinished there) is read from the primary, pages and download", async () => {
    const api = jobsApi(gw);
    const page = await api.results(key, lateJob);
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(4);
    expect(page.body.data.map((r: { input: string }) => r.input)).not.toContain(REPLICA);
    const csv = await download(lateJob);
    expect(csv).toHaveLength(4);
    expect(csv.map((r) => r.input_masked)).not.toContain(REPLICA);
  });

  it("a job created after the copy (absent on the replica) is read from the primary", async () => {
    const api = jobsApi(gw);
    const job = await api.create(key, { numbers: [TEST.clean, TEST.lowSpam], checks: ["spam"] });
    expect(job.status).toBe(201);
    const page = await api.results(key, job.body.id);
    expect({ status: page.status, rows: page.body.data.length }).toEqual({ status: 200, rows: 2 });
    expect(page.body.data.map((r: { input: string }) => r.input)).not.toContain(REPLICA);
    const csv = await download(job.body.id);
    expect(csv.map((r) => r.input_masked)).not.toContain(REPLICA);
  });

  it("usage is read from the replica (lag-tolerant)", async () => {
    const primary = await gw.store.pool.query<{ checks: number }>(`SELECT sum(checks)::int AS checks FROM daily_usage WHERE account_id = $1 AND check_code <> '*'`, [owner.accountId]);
    const res = await usage();
    expect(res.status).toBe(200);
    // The replica's figures: the primary's at the copy plus the 1000 added there per row (spam and email rows).
    const replica = await onReplica((c) => c.query<{ checks: number }>(`SELECT sum(checks)::int AS checks FROM daily_usage WHERE account_id = $1 AND check_code <> '*'`, [owner.accountId]));
    expect(res.body.totals.checks).toBe(replica.rows[0]!.checks);
    expect(res.body.totals.checks).not.toBe(primary.rows[0]!.checks);
  });
});

describe("when the replica goes away", () => {
  it("every read falls back to the primary — no 500 — and the replica is used again once it answers", async () => {
    await relay.cut();
    const api = jobsApi(gw);
    const fallbacksBefore = await fallbacks();
    const res = await getLookup(completedLookup);
    expect({ status: res.status, inputs: inputs(res.body) }).not.toEqual({ status: 200, inputs: [REPLICA] });
    expect(res.status).toBe(200);
    const page = await api.results(key, finishedJob);
    expect(page.status).toBe(200);
    expect(page.body.data.map((r: { input: string }) => r.input)).not.toContain(REPLICA);
    const csv = await download(finishedJob);
    expect(csv).toHaveLength(4);
    expect(csv.map((r) => r.input_masked)).not.toContain(REPLICA);
    const used = await usage();
    expect(used.status).toBe(200);
    expect(await fallbacks()).toBeGreaterThanOrEqual(fallbacksBefore + 4);

    // Back: the next probe (every second) finds it and reads go there again.
    await relay.restore();
    await until("reads go to the replica again", async () => inputs((await getLookup(completedLookup)).body)[0] === REPLICA);
  });
});

describe("a replica whose host goes silent (no reset)", () => {
  let silent: PostgresRelay;
  let other: TestGateway;

  beforeAll(async () => {
    silent = new PostgresRelay({ host: "127.0.0.1", port: Number(new URL(replicaUrl).port || 5432) });
    await silent.start();
    other = await startTestGateway({ env, config: { DATABASE_REPLICA_URL: silent.urlFor(replicaUrl), DATABASE_REPLICA_POOL_SIZE: "2" } });
    await until("the replica is in use", async () => other.deps.reads.inUse);
  });

  afterAll(async () => {
    await other?.close();
    await silent?.cut();
  });

  const read = () => other.http().get(`/v1/lookups/${completedLookup}`).set(bearer(key));

  it("a read the replica stops answering mid-way is answered from the primary, not held for minutes", async () => {
    expect(inputs((await read()).body)).toEqual([REPLICA]);
    silent.freeze();
    try {
      // Sent while the replica is still in use: it hangs there until the statement timeout drops it.
      const failedBefore = await fallbacksBy("lookup", "error");
      const res = await read();
      expect(res.status).toBe(200);
      expect(inputs(res.body)).toHaveLength(1);
      expect(inputs(res.body)).not.toContain(REPLICA);
      expect(await fallbacksBy("lookup", "error")).toBe(failedBefore + 1);
      await until("the probe sets the silent replica aside", async () => !other.deps.reads.inUse);
    } finally {
      silent.thaw();
    }
    await until("the replica is in use again", async () => other.deps.reads.inUse, 15_000);
  }, 30_000);

  it("the probe measures with a connection of its own: a replica whose pooled connections are all held is still found silent", async () => {
    const pool = other.store.replica as pg.Pool;
    const held = await Promise.all([pool.connect(), pool.connect()]);
    try {
      silent.freeze();
      await until("the probe sets the silent replica aside", async () => !other.deps.reads.inUse);
    } finally {
      silent.thaw();
      for (const c of held) c.release(true);
    }
    await until("the replica is in use again", async () => other.deps.reads.inUse, 15_000);
  }, 30_000);
});

describe("a replica URL nobody answers", () => {
  it("the gateway starts and serves every read from the primary", async () => {
    const port = await freePort();
    const other = await startTestGateway({ env, config: { DATABASE_REPLICA_URL: `postgresql://postgres@127.0.0.1:${port}/nothing` } });
    try {
      expect(other.deps.reads.inUse).toBe(false);
      const api = jobsApi(other);
      const res = await other.http().get(`/v1/lookups/${completedLookup}`).set(bearer(key));
      expect({ status: res.status, lookup: res.body.status }).toEqual({ status: 200, lookup: "completed" });
      expect(inputs(res.body)).not.toContain(REPLICA);
      expect((await api.results(key, finishedJob)).status).toBe(200);
      expect((await other.http().get("/v1/usage").query({ from: today(), to: today() }).set(bearer(key))).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

async function fallbacks(): Promise<number> {
  const m = await metrics.replicaFallbacks().get();
  return m.values.reduce((a, v) => a + v.value, 0);
}

async function download(job: string): Promise<Array<Record<string, string>>> {
  const res = await jobsApi(gw)
    .download(key, job, { format: "csv" })
    .buffer(true)
    .parse((r, done) => {
      let data = "";
      r.setEncoding("utf8");
      r.on("data", (chunk: string) => (data += chunk));
      r.on("end", () => done(null, data));
    });
  expect(res.status).toBe(200);
  const [header, ...rows] = parseCsv(res.body as string);
  return rows.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ""])));
}
