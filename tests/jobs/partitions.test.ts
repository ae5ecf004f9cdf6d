import { newId, randomBase62 } from "@svc/domain";
import {
  createEndpoint,
  createStore,
  deliveryLog,
  dropExpiredPartitions,
  ensureMonthPartitions,
  getLookup,
  insertJob,
  insertLookup,
  jobRowsPage,
  maintainPartitions,
  planEvent,
  purgeExpired,
  recordAttempt,
  recordEvent,
  renderRowsCopy,
  withTransaction,
  type NewJob,
  type NewLookup,
  type Sql,
  type Store,
} from "@svc/store";
import { createTestEnv, type TestEnv } from "../support/env";
import { accountWithKey } from "../support/fixtures";
import { storedNumberRow } from "./helpers";
import { spawn } from "node:child_process";
import path from "node:path";

/**
 * lookups and result_rows partitioned by the month of the lookup's or job's id
 * (migration 20261127100000_partition_by_month, docs/partitioning.md): partitions made
 * ahead with the clock the caller gives, reads that touch one partition, and
 * retention that drops a month wholly past retention instead of deleting its rows.
 */
let env: TestEnv;
let store: Store;
let owner: { accountId: string; apiKeyId: string };
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 4, applicationName: "partitions-test" });
  const key = await accountWithKey(store, env.keyHashSecret, { mode: "test" });
  owner = { accountId: key.accountId, apiKeyId: key.keyId };
});
afterAll(async () => store.close());

const at = (iso: string) => new Date(iso);

const row = (n: number) => storedNumberRow(n);

/** A completed test lookup made at `createdAt` (its id says so unless `id` is given), kept until `expiresAt`. */
async function lookupAt(createdAt: Date, expiresAt: Date, id = newId("lookup", 22, createdAt)): Promise<string> {
  const l: NewLookup = {
    id,
    accountId: owner.accountId,
    apiKeyId: owner.apiKeyId,
    livemode: false,
    status: "completed",
    checks: ["number.spam"],
    checksTotal: 2,
    webhookEndpointId: null,
    requestId: newId("request"),
    createdAt,
    completedAt: createdAt,
    completesAt: null,
    expiresAt,
    rows: [row(1), row(2)],
  };
  await insertLookup(store.pool, l);
  return id;
}

/** A test job of `rows` rows made at `createdAt`, in `status`, kept until `expiresAt`. */
async function jobAt(createdAt: Date, expiresAt: Date, rows: number, status: NewJob["status"] = "completed"): Promise<string> {
  const id = newId("job", 22, createdAt);
  const stored = Array.from({ length: rows }, (_, i) => row(i + 1));
  await withTransaction(store.pool, (client) =>
    insertJob(client, {
      id,
      accountId: owner.accountId,
      apiKeyId: owner.apiKeyId,
      livemode: false,
      status,
      checks: ["number.spam"],
      checksTotal: rows,
      counters: { done: rows, conclusive: rows, nonBillable: 0 },
      maxCostMicros: null,
      estimate: {},
      webhookEndpointId: null,
      progressEvents: false,
      resultsUrl: `http://127.0.0.1/v1/jobs/${id}/results`,
      requestId: newId("request"),
      createdAt,
      finishedAt: status === "completed" ? createdAt : null,
      expiresAt,
      rows: renderRowsCopy(id, stored),
      chunkSize: 0,
    }),
  );
  return id;
}

/** A `webhook.test` event at `at`, planned to `endpointId` and attempted once (delivered). */
async function deliveredEventAt(endpointId: string, at: Date): Promise<{ eventId: string; deliveryId: string }> {
  const eventId = await recordEvent(store.pool, { accountId: owner.accountId, livemode: false, type: "webhook.test", data: { object: "event" }, endpointId, createdAt: at });
  const [task] = (await planEvent(store.pool, eventId, at, 15_000)) ?? [];
  if (!task) throw new Error("no delivery planned");
  await recordAttempt(store.pool, { deliveryId: task.delivery_id, attemptNo: 1, startedAt: at, durationMs: 12, statusCode: 200, error: null, succeeded: true, retryAt: null, now: at });
  return { eventId, deliveryId: task.delivery_id };
}

/** Partitions of `parent` with their bounds, e.g. `lookups_p2031_01: FOR VALUES FROM ('2031-01-01') TO ('2031-02-01')`. */
async function partitionsOf(parent: string): Promise<Record<string, string>> {
  const { rows } = await store.pool.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [parent],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.bound]));
}

const exists = async (table: string) => (await store.pool.query<{ t: string | null }>(`SELECT to_regclass($1)::text AS t`, [table])).rows[0]?.t !== null;
const count = async (sql: string, values: unknown[] = []) => (await store.pool.query<{ n: number }>(sql, values)).rows[0]?.n;

/**
 * Runs a store function against Postgres with EXPLAIN (FORMAT JSON) put before each
 * of its statements, and returns the tables each plan reads. The store's own statement
 * text and parameters are what is planned.
 */
async function tablesScannedBy(call: (sql: Sql) => Promise<unknown>): Promise<string[][]> {
  const plans: string[][] = [];
  const explaining = {
    query: async (config: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
      const text = typeof config === "string" ? config : config.text;
      const params = typeof config === "string" ? values : (config.values ?? values);
      const { rows } = await store.pool.query(`EXPLAIN (FORMAT JSON) ${text}`, params);
      const relations: string[] = [];
      const walk = (node: Record<string, unknown>) => {
        if (typeof node["Relation Name"] === "string") relations.push(node["Relation Name"]);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      walk(rows[0]["QUERY PLAN"][0].Plan);
      plans.push(relations.sort());
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Sql;
  await call(explaining);
  return plans;
}

describe("month partitions of lookups, result_rows, events and delivery_attempts", () => {
  afterEach(async () => {
    // The drop test's clock is years ahead: give later tests this month's partitions back.
    await ensureMonthPartitions(store.pool, new Date());
  });

  it("are made ahead for this month and the next two, once, across a month and a year boundary", async () => {
    expect(await ensureMonthPartitions(store.pool, at("2031-11-30T23:59:59.999Z"))).toEqual(["2031-11-01", "2031-12-01", "2032-01-01"]);
    expect(await ensureMonthPartitions(store.pool, at("2031-11-30T23:59:59.999Z"))).toEqual([]);
    // Two replicas at once: each month is made once.
    const both = await Promise.all([ensureMonthPartitions(store.pool, at("2031-12-01T00:00:00.000Z")), ensureMonthPartitions(store.pool, at("2031-12-01T00:00:00.000Z"))]);
    expect(both.flat()).toEqual(["2032-02-01"]);

    const lookups = await partitionsOf("lookups");
    const rows = await partitionsOf("result_rows");
    for (const [month, next] of [["2031_11", "2031-12-01"], ["2031_12", "2032-01-01"], ["2032_01", "2032-02-01"], ["2032_02", "2032-03-01"]] as const) {
      const from = `${month.replace("_", "-")}-01`;
      expect(lookups[`lookups_p${month}`]).toBe(`FOR VALUES FROM ('${from}') TO ('${next}')`);
      expect(rows[`result_rows_p${month}`]).toBe(`FOR VALUES FROM ('${from}') TO ('${next}')`);
    }
    expect(lookups.lookups_legacy).toBe("FOR VALUES FROM (MINVALUE) TO ('2000-01-01')");

    // A lookup made in the last millisecond of a year and one in the first of the next land in their months and are found.
    const last = await lookupAt(at("2031-12-31T23:59:59.999Z"), at("2032-03-01T00:00:00.000Z"));
    const first = await lookupAt(at("2032-01-01T00:00:00.000Z"), at("2032-03-01T00:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM lookups_p2031_12 WHERE id = $1`, [last])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM result_rows_p2032_01 WHERE lookup_id = $1`, [first])).toBe(2);
    const scope = { accountId: owner.accountId, livemode: false };
    expect((await getLookup(store.pool, last, scope, at("2032-01-15T00:00:00.000Z")))?.rows).toHaveLength(2);
    expect((await getLookup(store.pool, first, scope, at("2032-01-15T00:00:00.000Z")))?.rows).toHaveLength(2);
  });

  it("are the only partition a lookup read by id or a page of a job's results scans", async () => {
    await ensureMonthPartitions(store.pool, at("2031-03-15T00:00:00.000Z"));
    const made = at("2031-04-10T12:00:00.000Z");
    const lookup = await lookupAt(made, at("2031-06-01T00:00:00.000Z"));
    const job = await jobAt(made, at("2031-06-01T00:00:00.000Z"), 3);
    // An id from before partitioning (22 random characters) is found in the legacy partition alone.
    const old = await lookupAt(made, at("2031-06-01T00:00:00.000Z"), `lkp_${randomBase62(22)}`);
    expect(Object.keys(await partitionsOf("result_rows")).length).toBeGreaterThan(4);

    const scope = { accountId: owner.accountId, livemode: false };
    expect(await tablesScannedBy((sql) => getLookup(sql, lookup, scope, made))).toEqual([["lookups_p2031_04", "result_rows_p2031_04"]]);
    expect(await tablesScannedBy((sql) => jobRowsPage(sql, job, 0, 100, null))).toEqual([["result_rows_p2031_04"]]);
    expect(await tablesScannedBy((sql) => jobRowsPage(sql, job, 0, 100, { service: "number.spam", status: "ok" }))).toEqual([["result_rows_p2031_04"]]);
    expect(await tablesScannedBy((sql) => getLookup(sql, old, scope, made))).toEqual([["lookups_legacy", "result_rows_legacy"]]);
    // An event's delivery log reads its month's attempts alone.
    const endpoint = await withTransaction(store.pool, (client) =>
      createEndpoint(client, { accountId: owner.accountId, livemode: false, url: "https://hooks.example/log", events: ["lookup.completed"], secretEncrypted: Buffer.from("sealed"), now: made }),
    );
    if (endpoint === "limit_reached") throw new Error("endpoint limit");
    const { eventId } = await deliveredEventAt(endpoint.endpoint.id, made);
    expect(await tablesScannedBy((sql) => deliveryLog(sql, eventId))).toEqual([["delivery_attempts_p2031_04", "webhook_deliveries"]]);

    // And what they read is the lookup's and the job's own rows.
    expect((await getLookup(store.pool, lookup, scope, made))?.rows.map((r) => r.e164)).toEqual(["+12025550101", "+12025550102"]);
    expect((await getLookup(store.pool, old, scope, made))?.rows).toHaveLength(2);
    expect((await jobRowsPage(store.pool, job, 1, 100, null)).map((r) => r.row_no)).toEqual([2, 3]);
  });

  it("are dropped by retention once every row in them has expired, and only then; other months keep deleting row by row", async () => {
    await ensureMonthPartitions(store.pool, at("2033-01-15T00:00:00.000Z"));
    // January: lookups and a job, all expired by mid-February; a job still running until it finishes.
    const janLookups = [await lookupAt(at("2033-01-03T00:00:00.000Z"), at("2033-02-03T00:00:00.000Z")), await lookupAt(at("2033-01-31T23:00:00.000Z"), at("2033-02-14T00:00:00.000Z"))];
    const janJob = await jobAt(at("2033-01-20T00:00:00.000Z"), at("2033-02-10T00:00:00.000Z"), 5, "running");
    // February: one lookup expired, one kept for a long retention.
    const febExpired = await lookupAt(at("2033-02-02T00:00:00.000Z"), at("2033-03-01T00:00:00.000Z"));
    const febKept = await lookupAt(at("2033-02-03T00:00:00.000Z"), at("2034-02-03T00:00:00.000Z"));
    const febJob = await jobAt(at("2033-02-05T00:00:00.000Z"), at("2034-02-05T00:00:00.000Z"), 4);
    // Webhook events (kept EVENT_RETENTION_DAYS, 30) with their deliveries and attempts, in January and in February.
    const endpoint = await withTransaction(store.pool, (client) =>
      createEndpoint(client, { accountId: owner.accountId, livemode: false, url: "https://hooks.example/in", events: ["lookup.completed"], secretEncrypted: Buffer.from("sealed"), now: at("2033-01-02T00:00:00.000Z") }),
    );
    if (endpoint === "limit_reached") throw new Error("endpoint limit");
    const janEvent = await deliveredEventAt(endpoint.endpoint.id, at("2033-01-31T23:59:59.999Z"));
    const febEvent = await deliveredEventAt(endpoint.endpoint.id, at("2033-02-01T00:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM delivery_attempts_p2033_01`)).toBe(1);

    // Any row deleted one by one from January's partitions would be logged here; a dropped table logs nothing.
    await store.pool.query(`CREATE TABLE deleted_one_by_one (tbl text)`);
    await store.pool.query(`CREATE FUNCTION log_row_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO deleted_one_by_one VALUES (TG_TABLE_NAME); RETURN OLD; END $$`);
    for (const t of ["lookups_p2033_01", "result_rows_p2033_01", "lookups_p2033_02", "result_rows_p2033_02", "events_p2033_01", "delivery_attempts_p2033_01", "events_p2033_02", "delivery_attempts_p2033_02"]) {
      await store.pool.query(`CREATE TRIGGER log_delete BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION log_row_delete()`);
    }

    // January has ended, but not by the day's grace: nothing is dropped.
    expect((await dropExpiredPartitions(store.pool, at("2033-02-01T12:00:00.000Z"))).map((d) => d.month)).not.toContain("2033-01-01");
    // Past every January lookup's retention, but its job is still running: kept (and January's events are not 30 days old yet).
    expect((await dropExpiredPartitions(store.pool, at("2033-03-03T00:00:00.000Z"))).map((d) => d.month)).not.toContain("2033-01-01");
    expect([await exists("lookups_p2033_01"), await exists("events_p2033_01")]).toEqual([true, true]);

    await store.pool.query(`UPDATE jobs SET status = 'completed', finished_at = $2 WHERE id = $1`, [janJob, at("2033-01-21T00:00:00.000Z")]);
    const now = at("2033-03-15T00:00:00.000Z");
    const { dropped } = await maintainPartitions(store.pool, now);
    // January's events are more than 30 days old since March 4th (plus a day's grace); February's newest is not.
    expect(dropped.find((d) => d.month === "2033-01-01")).toEqual({
      month: "2033-01-01",
      tables: ["result_rows_p2033_01", "lookups_p2033_01", "delivery_attempts_p2033_01", "events_p2033_01"],
    });
    expect(dropped.map((d) => d.month)).not.toContain("2033-02-01");
    expect([await exists("lookups_p2033_01"), await exists("result_rows_p2033_01"), await exists("events_p2033_01"), await exists("delivery_attempts_p2033_01")]).toEqual([false, false, false, false]);
    expect(await deliveryLog(store.pool, janEvent.eventId)).toEqual([]);
    expect(await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = $1`, [janEvent.deliveryId])).toBe(0);
    expect(await deliveryLog(store.pool, febEvent.eventId)).toEqual([
      expect.objectContaining({ delivery_id: febEvent.deliveryId, status: "succeeded", attempts: [expect.objectContaining({ attempt_no: 1, status_code: 200, succeeded: true })] }),
    ]);
    expect(await count(`SELECT count(*)::int AS n FROM lookups WHERE id = ANY ($1)`, [janLookups])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM result_rows WHERE job_id = $1`, [janJob])).toBe(0);

    // February still holds a live lookup and job: its expired lookup is deleted row by row, the rest untouched.
    await purgeExpired(store.pool, now);
    // January's job row itself goes row by row too (jobs are not partitioned; its rows went with the partition).
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE id = $1`, [janJob])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM lookups_p2033_02`)).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM result_rows_p2033_02 WHERE lookup_id = $1`, [febKept])).toBe(2);
    expect(await count(`SELECT count(*)::int AS n FROM result_rows_p2033_02 WHERE lookup_id = $1`, [febExpired])).toBe(0);
    expect((await jobRowsPage(store.pool, febJob, 0, 100, null)).map((r) => r.row_no)).toEqual([1, 2, 3, 4]);
    const { rows: log } = await store.pool.query<{ tbl: string; n: number }>(`SELECT tbl, count(*)::int AS n FROM deleted_one_by_one GROUP BY tbl ORDER BY tbl`);
    expect(log).toEqual([
      { tbl: "lookups_p2033_02", n: 1 },
      { tbl: "result_rows_p2033_02", n: 2 },
    ]);
  });

  it("gives up on a lock a long transaction holds instead of queueing every account write behind it, and makes the month later", async () => {
    // Attaching a month's partitions copies their foreign keys, which locks accounts against writes.
    const holder = await store.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`UPDATE accounts SET id = id WHERE id = $1`, [owner.accountId]);
      await expect(ensureMonthPartitions(store.pool, at("2037-06-15T00:00:00.000Z"), 0)).rejects.toMatchObject({ code: "55P03" });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect(await ensureMonthPartitions(store.pool, at("2037-06-15T00:00:00.000Z"), 0)).toEqual(["2037-06-01"]);
  });

  it("tries a lock again a few times within the upkeep: an account write held for 2.5 s only delays it", async () => {
    const holder = await store.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`UPDATE accounts SET id = id WHERE id = $1`, [owner.accountId]);
      const released = new Promise((r) => setTimeout(r, 2_500)).then(() => holder.query("ROLLBACK"));
      // Each wait is 250 ms (what an account write queued behind the attach can feel); the attempts span 3 s.
      expect(await ensureMonthPartitions(store.pool, at("2037-09-15T00:00:00.000Z"), 0)).toEqual(["2037-09-01"]);
      await released;
    } finally {
      holder.release();
    }
  });

  it("drops a month's result rows while a download of another month is streaming: the detach waits for that reader instead of giving up", async () => {
    await ensureMonthPartitions(store.pool, at("2038-03-15T00:00:00.000Z"));
    await lookupAt(at("2038-03-02T00:00:00.000Z"), at("2038-04-01T00:00:00.000Z"));
    await jobAt(at("2038-03-10T00:00:00.000Z"), at("2038-04-09T00:00:00.000Z"), 3);
    const may20 = at("2038-05-20T00:00:00.000Z");
    await ensureMonthPartitions(store.pool, may20); // so the upkeep below goes straight to the drops
    const reader = await store.pool.connect();
    try {
      // A download reads the parent table for seconds (one statement over a cursor; here one transaction).
      await reader.query("BEGIN");
      await reader.query(`SELECT count(*) FROM result_rows WHERE id_month = '2038-04-01'`);
      const finished = new Promise((r) => setTimeout(r, 3_000)).then(() => reader.query("COMMIT"));
      const { dropped } = await maintainPartitions(store.pool, may20);
      await finished;
      expect(dropped).toContainEqual(expect.objectContaining({ month: "2038-03-01", tables: expect.arrayContaining(["result_rows_p2038_03", "lookups_p2038_03"]) }));
      expect([await exists("lookups_p2038_03"), await exists("result_rows_p2038_03")]).toEqual([false, false]);
    } finally {
      reader.release();
    }
  });

  it("stops waiting for a detach when the service shuts down, and the next upkeep finishes what it left pending", async () => {
    await ensureMonthPartitions(store.pool, at("2039-03-15T00:00:00.000Z"));
    await lookupAt(at("2039-03-02T00:00:00.000Z"), at("2039-04-01T00:00:00.000Z"));
    const may20 = at("2039-05-20T00:00:00.000Z");
    await ensureMonthPartitions(store.pool, may20);
    const reader = await store.pool.connect();
    let reading = true;
    try {
      await reader.query("BEGIN");
      await reader.query(`SELECT count(*) FROM result_rows WHERE id_month = '2039-04-01'`);
      const stopping = new AbortController();
      const upkeep = maintainPartitions(store.pool, may20, stopping.signal);
      const outcome = upkeep.then(() => "finished", () => "gave up");
      // The detach waits for the reader (up to RESULT_ROWS_DETACH_WAIT_MS); then the service is told to stop.
      for (let i = 0; ; i += 1) {
        const { rows } = await store.pool.query(`SELECT 1 FROM pg_stat_activity WHERE query LIKE 'ALTER TABLE "result_rows" DETACH%' AND wait_event_type = 'Lock'`);
        if (rows.length > 0) break;
        if (i > 200) throw new Error("the detach never waited");
        await new Promise((r) => setTimeout(r, 25));
      }
      stopping.abort();
      expect(await outcome).toBe("gave up");
      expect(reading).toBe(true); // it did not wait for the reader
    } finally {
      await reader.query("COMMIT");
      reading = false;
      reader.release();
    }
    const { dropped } = await maintainPartitions(store.pool, may20);
    expect(dropped).toContainEqual(expect.objectContaining({ month: "2039-03-01", tables: expect.arrayContaining(["result_rows_p2039_03", "lookups_p2039_03"]) }));
  });

  it("without the owner's partition upkeep, retention still holds: a month's expired rows and events are deleted row by row once its drop is overdue", async () => {
    await ensureMonthPartitions(store.pool, at("2036-03-15T00:00:00.000Z"));
    const lookup = await lookupAt(at("2036-03-20T00:00:00.000Z"), at("2036-04-19T00:00:00.000Z"));
    const job = await jobAt(at("2036-03-10T00:00:00.000Z"), at("2036-04-09T00:00:00.000Z"), 3);
    const endpoint = await withTransaction(store.pool, (client) =>
      createEndpoint(client, { accountId: owner.accountId, livemode: false, url: "https://hooks.example/fallback", events: ["lookup.completed"], secretEncrypted: Buffer.from("sealed"), now: at("2036-03-01T00:00:00.000Z") }),
    );
    if (endpoint === "limit_reached") throw new Error("endpoint limit");
    await deliveredEventAt(endpoint.endpoint.id, at("2036-03-05T00:00:00.000Z"));
    // April 19th, noon: past every row's expiry, and the month's drop is due (its last expiry) but not overdue.
    await purgeExpired(store.pool, at("2036-04-19T12:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM lookups_p2036_03`)).toBe(1);
    // No upkeep dropped it; a day later the check-worker's purge deletes the rows itself.
    await purgeExpired(store.pool, at("2036-04-20T12:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM lookups WHERE id = $1`, [lookup])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE id = $1`, [job])).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM result_rows_p2036_03`)).toBe(0);
    // March's events are due to go on May 2nd (30 days after the month, plus the grace); overdue a day later.
    await purgeExpired(store.pool, at("2036-05-02T12:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM events_p2036_03`)).toBeGreaterThan(0);
    await purgeExpired(store.pool, at("2036-05-04T00:00:00.000Z"));
    expect(await count(`SELECT count(*)::int AS n FROM events_p2036_03`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM delivery_attempts_p2036_03`)).toBe(0);
  });

  it("with one retention period for everyone, deletes no expired row one by one: they stop being readable, then go with their month", async () => {
    await ensureMonthPartitions(store.pool, at("2035-03-15T00:00:00.000Z"));
    // Every account keeps 30 days: March's lookups and job expire between April 1st and 19th.
    const early = await lookupAt(at("2035-03-02T00:00:00.000Z"), at("2035-04-01T00:00:00.000Z"));
    const late = await lookupAt(at("2035-03-20T00:00:00.000Z"), at("2035-04-19T00:00:00.000Z"));
    const job = await jobAt(at("2035-03-10T00:00:00.000Z"), at("2035-04-09T00:00:00.000Z"), 3);
    await store.pool.query(`CREATE TABLE deleted_in_march (tbl text)`);
    await store.pool.query(`CREATE FUNCTION log_march_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO deleted_in_march VALUES (TG_TABLE_NAME); RETURN OLD; END $$`);
    for (const t of ["lookups_p2035_03", "result_rows_p2035_03"]) await store.pool.query(`CREATE TRIGGER log_delete BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION log_march_delete()`);

    // April 10th: the early lookup and the job have expired, the late lookup has not. Nothing is deleted
    // row by row (the month goes whole on the 19th, within PARTITION_LINGER_MS of every expiry), and reads
    // already treat the expired ones as gone.
    const april10 = at("2035-04-10T00:00:00.000Z");
    await purgeExpired(store.pool, april10);
    expect(await getLookup(store.pool, early, { accountId: owner.accountId, livemode: false }, april10)).toBeNull();
    expect(await getLookup(store.pool, late, { accountId: owner.accountId, livemode: false }, april10)).not.toBeNull();
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE id = $1`, [job])).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM deleted_in_march`)).toBe(0);

    // April 20th: every row of March has expired; the month's partitions are dropped, then the job's own row goes.
    const april20 = at("2035-04-20T00:00:00.000Z");
    expect((await maintainPartitions(store.pool, april20)).dropped).toContainEqual(expect.objectContaining({ month: "2035-03-01", tables: expect.arrayContaining(["result_rows_p2035_03", "lookups_p2035_03"]) }));
    await purgeExpired(store.pool, april20);
    expect(await count(`SELECT count(*)::int AS n FROM jobs WHERE id = $1`, [job])).toBe(0);
    expect([await exists("lookups_p2035_03"), await exists("result_rows_p2035_03")]).toEqual([false, false]);
    expect(await count(`SELECT count(*)::int AS n FROM deleted_in_march`)).toBe(0);
  });
});

describe("scripts/partition-upkeep.mjs, the schema owner's upkeep", () => {
  const script = path.resolve(__dirname, "..", "..", "scripts", "partition-upkeep.mjs");
  const run = (args: string[]) => {
    const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, exited, output: () => out };
  };

  it("drops a month wholly past retention (today's, by the clock) and makes the coming ones; then runs every hour until SIGTERM", async () => {
    // January of last year: its partitions, one lookup expired long ago.
    const year = new Date().getUTCFullYear() - 1;
    await ensureMonthPartitions(store.pool, at(`${year}-01-15T00:00:00.000Z`), 0);
    await lookupAt(at(`${year}-01-10T00:00:00.000Z`), at(`${year}-02-09T00:00:00.000Z`));
    const once = run([]);
    expect(await once.exited).toBe(0);
    expect(once.output()).toContain(`lookups_p${year}_01`);
    expect(await exists(`lookups_p${year}_01`)).toBe(false);

    const every = run(["--every", "3600"]);
    for (let i = 0; !every.output().includes("partition upkeep done"); i += 1) {
      if (i > 200) throw new Error(`no first run:\n${every.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    every.child.kill("SIGTERM");
    expect(await every.exited).toBe(0);
  });
});
