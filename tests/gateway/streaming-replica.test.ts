import pg from "pg";
import { metrics } from "@svc/metrics";
import { bearer, type TestKey } from "../support/fixtures";
import { createTestEnv } from "../support/env";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { startPgPair, type PgPair } from "../support/pg-standby";
import { freePort, until } from "../observability/support";
import { jobsApi, TEST } from "../jobs/helpers";

/**
 * The gateway against a real streaming standby (a primary and a pg_basebackup
 * standby of the test's own): reads go to the standby once it has replayed what
 * they need; with replay paused, a job it has not replayed is read from the
 * primary, and once its measured lag passes DATABASE_REPLICA_MAX_LAG_MS it gets no
 * reads at all until replay resumes.
 */
let pair: PgPair;
let standby: pg.Client;
let gw: TestGateway;
let owner: TestKey;

const reads = async (read: string, target: string) => (await metrics.dbReads().get()).values.find((v) => v.labels.read === read && v.labels.target === target)?.value ?? 0;
const lag = async () => (await metrics.replicaLag().get()).values[0]?.value ?? NaN;

beforeAll(async () => {
  pair = startPgPair({ primary: await freePort(), standby: await freePort() });
  standby = new pg.Client({ connectionString: pair.standbyUrl });
  await standby.connect();
  const env = { ...(await createTestEnv()), databaseUrl: pair.primaryUrl };
  gw = await startTestGateway({ env, config: { DATABASE_REPLICA_URL: pair.standbyUrl, DATABASE_REPLICA_MAX_LAG_MS: "1500" } });
  owner = await jobsApi(gw).newKey();
  await until("the standby is in use", async () => gw.deps.reads.inUse);
}, 60_000);

afterAll(async () => {
  await standby?.query("SELECT pg_wal_replay_resume()").catch(() => undefined);
  await standby?.end().catch(() => undefined);
  await gw?.close();
  pair?.stop();
});

it("is a real standby, measured as current", async () => {
  expect((await standby.query("SELECT pg_is_in_recovery() AS r")).rows[0].r).toBe(true);
  expect(await lag()).toBeLessThanOrEqual(1.5);
});

it("a completed lookup is read from the standby once it has replayed it", async () => {
  const created = await gw.http().post("/v1/lookup").set(bearer(owner.key)).send({ numbers: [TEST.clean], checks: ["spam"] });
  expect(created.body.status).toBe("completed");
  await until("the standby has the lookup", async () => (await standby.query("SELECT status FROM lookups WHERE id = $1", [created.body.id])).rows[0]?.status === "completed");
  const before = await reads("lookup", "replica");
  const res = await gw.http().get(`/v1/lookups/${created.body.id}`).set(bearer(owner.key));
  expect({ status: res.status, lookup: res.body.status }).toEqual({ status: 200, lookup: "completed" });
  expect(await reads("lookup", "replica")).toBe(before + 1);
});

it("with replay paused: a new job comes from the primary, then the standby is set aside for its lag, and used again once it catches up", async () => {
  const api = jobsApi(gw);
  await standby.query("SELECT pg_wal_replay_pause()");
  const job = await api.create(owner.key, { numbers: [TEST.clean, TEST.scam], emails: [TEST.deliverable], checks: ["spam", "email"] });
  expect(job.status).toBe(201);
  expect((await api.get(owner.key, job.body.id)).body.status).toBe("completed");
  const primaryBefore = await reads("results", "primary");
  const page = await api.results(owner.key, job.body.id);
  expect({ status: page.status, rows: page.body.data.length }).toEqual({ status: 200, rows: 3 });
  expect(await reads("results", "primary")).toBe(primaryBefore + 1);

  // The primary moved on and the standby does not replay: its lag grows past 1.5 s.
  await until("the standby is set aside", async () => !gw.deps.reads.inUse);
  expect(await lag()).toBeGreaterThan(1.5);
  const unavailable = async () => (await metrics.replicaFallbacks().get()).values.find((v) => v.labels.read === "results" && v.labels.reason === "unavailable")?.value ?? 0;
  const setAsideBefore = await unavailable();
  expect((await api.results(owner.key, job.body.id)).body.data).toHaveLength(3);
  expect(await unavailable()).toBe(setAsideBefore + 1);

  await standby.query("SELECT pg_wal_replay_resume()");
  await until("the standby is in use again", async () => gw.deps.reads.inUse);
  const replicaBefore = await reads("results", "replica");
  const again = await api.results(owner.key, job.body.id);
  expect(again.body.data).toHaveLength(3);
  expect(await reads("results", "replica")).toBe(replicaBefore + 1);
}, 30_000);

it("once the standby is promoted it no longer follows the primary: it gets no reads, though its lag can no longer be measured", async () => {
  // Last: the pair has no standby afterwards.
  pair.promote();
  expect((await standby.query("SELECT pg_is_in_recovery() AS r")).rows[0].r).toBe(false);
  await until("the promoted server is set aside", async () => !gw.deps.reads.inUse);
  const created = await gw.http().post("/v1/lookup").set(bearer(owner.key)).send({ numbers: [TEST.clean], checks: ["spam"] });
  const before = await reads("lookup", "primary");
  expect((await gw.http().get(`/v1/lookups/${created.body.id}`).set(bearer(owner.key))).status).toBe(200);
  expect(await reads("lookup", "primary")).toBe(before + 1);
  // Still set aside after further probes: not being in recovery no longer counts as current.
  await gw.deps.reads.probe();
  await gw.deps.reads.probe();
  expect(gw.deps.reads.inUse).toBe(false);
}, 30_000);

