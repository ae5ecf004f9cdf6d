import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { newId, randomBase62 } from "@svc/domain";
import {
  chunkRows,
  completeLookup,
  createStore,
  deliveryLog,
  getJob,
  getLookup,
  insertLookup,
  jobRowsPage,
  planEvent,
  purgeExpired,
  recordAttempt,
  recordEvent,
  withTransaction,
  type Store,
  type StoredRow,
} from "@svc/store";
import { accountWithKey } from "../support/fixtures";
import { storedNumberRow } from "./helpers";
import { databaseUrl, withAdmin } from "../support/pg-admin";

/**
 * Migrations 20261127100000_partition_by_month and 20261127110000_partition_events
 * applied to a database that already holds lookups, jobs and their rows, and webhook
 * events with deliveries and attempts, written as the previous release wrote them (its
 * statements: ids of 22 random characters, no id_month). Every one stays readable
 * through today's store functions, the same as before; old and new work side by side.
 */
const MIGRATIONS = path.resolve(__dirname, "..", "..", "prisma", "migrations");
const THIS = "20261127100000_partition_by_month";
const EVENTS = "20261127110000_partition_events";
const migrations = readdirSync(MIGRATIONS).filter((m) => /^\d{14}_/.test(m)).sort();
const sqlOf = (m: string) => readFileSync(path.join(MIGRATIONS, m, "migration.sql"), "utf8");

const name = `svc_t_${process.env.SVC_TEST_RUN_ID ?? "x"}_pmig${randomBytes(3).toString("hex")}`;
let store: Store;

beforeAll(async () => {
  await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  store = createStore({ databaseUrl: databaseUrl(name), poolSize: 4, applicationName: "partition-migration-test" });
  for (const m of migrations.slice(0, migrations.indexOf(THIS))) await store.pool.query(sqlOf(m));
});
afterAll(async () => {
  await store.close();
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
});

const row = storedNumberRow;

const oldId = (kind: "lkp" | "job") => `${kind}_${randomBase62(22)}`;

/** The previous release's lookup insert (its insertLookup without usage): the lookup and its rows in one statement. */
async function oldLookup(owner: { accountId: string; keyId: string }, status: "completed" | "pending", expiresAt: Date, rows: StoredRow[]): Promise<string> {
  const id = oldId("lkp");
  await store.pool.query(
    `WITH lookup AS (
       INSERT INTO lookups (id, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done, request_id, created_at, completed_at, expires_at)
       VALUES ($1, $2, $3, false, $4, '{number.spam}', $5, $5, CASE WHEN $4 = 'completed' THEN $5 ELSE 0 END, 'req_old', now(), CASE WHEN $4 = 'completed' THEN now() END, $6)
       RETURNING id)
     INSERT INTO result_rows (lookup_id, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
     SELECT lookup.id, r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks, r.pending_checks
     FROM lookup, jsonb_to_recordset($7::jsonb) AS r(row_no int, kind text, input_masked text, e164 text, country text,
          number_status text, email text, email_status text, checks jsonb, pending_checks int)`,
    [id, owner.accountId, owner.keyId, status, rows.length, expiresAt, JSON.stringify(rows.map((r) => ({ ...r, pending_checks: r.checks.filter((c) => c.status === "pending").length })))],
  );
  return id;
}

/** The previous release's job insert: the job, then its rows (COPY's columns, as INSERT), then its chunks. */
async function oldJob(owner: { accountId: string; keyId: string }, expiresAt: Date, rows: StoredRow[]): Promise<string> {
  const id = oldId("job");
  await store.pool.query(
    `INSERT INTO jobs (id, account_id, api_key_id, livemode, status, checks, total, checks_total, done, conclusive, chunk_count, estimate, request_id, created_at, finished_at, expires_at)
     VALUES ($1, $2, $3, false, 'completed', '{number.spam}', $4, $4, $4, $4, 1, '{}', 'req_old', now(), now(), $5)`,
    [id, owner.accountId, owner.keyId, rows.length, expiresAt],
  );
  await store.pool.query(
    `INSERT INTO result_rows (job_id, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
     SELECT $1, r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks, 0
     FROM jsonb_to_recordset($2::jsonb) AS r(row_no int, kind text, input_masked text, e164 text, country text, number_status text, email text, email_status text, checks jsonb)`,
    [id, JSON.stringify(rows)],
  );
  await store.pool.query(`INSERT INTO job_chunks (job_id, chunk_no, first_row, last_row, status) VALUES ($1, 0, 1, $2, 'done')`, [id, rows.length]);
  return id;
}

/** The previous release's event, planned to `endpointId` with `attempts` attempts (its planEvent and recordAttempt, as SQL), or not planned. */
async function oldEvent(accountId: string, endpointId: string, createdAt: Date, attempts: number | null): Promise<{ id: string; delivery: string | null }> {
  const id = `evt_${randomBase62(22)}`;
  await store.pool.query(
    `INSERT INTO events (id, account_id, livemode, type, data, endpoint_id, created_at, dispatched_at) VALUES ($1, $2, false, 'webhook.test', '{"object":"event"}', $3, $4, $5)`,
    [id, accountId, endpointId, createdAt, attempts === null ? null : createdAt],
  );
  if (attempts === null) return { id, delivery: null };
  const { rows } = await store.pool.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, created_at, updated_at) VALUES ($1, $2, 'succeeded', $3, $4, $4) RETURNING id::text`,
    [id, endpointId, attempts, createdAt],
  );
  const delivery = rows[0]!.id;
  for (let n = 1; n <= attempts; n++) {
    await store.pool.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, error, succeeded) VALUES ($1::bigint, $2, $3, 10, $4, $5, $6)`,
      [delivery, n, createdAt, n === attempts ? 200 : 503, n === attempts ? null : "status 503", n === attempts],
    );
  }
  return { id, delivery };
}

describe(`migrations ${THIS} and ${EVENTS} on a database with data`, () => {
  it("keeps every lookup, job and row readable the same way, files them under the legacy partition, and new ones under their month", async () => {
    const a = await accountWithKey(store, "secret-a", { mode: "test" });
    const b = await accountWithKey(store, "secret-b", { mode: "test" });
    const week = new Date(Date.now() + 7 * 86_400_000);
    const lookups = [await oldLookup(a, "completed", week, [row(1), row(2)]), await oldLookup(b, "completed", week, [row(1)])];
    const pending = await oldLookup(a, "pending", week, [row(1, "pending"), row(2, "pending")]);
    const expired = await oldLookup(a, "completed", new Date(Date.now() - 1_000), [row(1)]);
    const jobs = [await oldJob(a, week, [row(1), row(2), row(3)]), await oldJob(b, week, [row(1), row(2)])];
    const rowsBefore = (await store.pool.query(`SELECT id, lookup_id, job_id, row_no, kind, input_masked, e164, country, number_status, checks, pending_checks FROM result_rows ORDER BY id`)).rows;
    const lookupsBefore = (await store.pool.query(`SELECT * FROM lookups ORDER BY id`)).rows;
    const jobsBefore = (await store.pool.query(`SELECT * FROM jobs ORDER BY id`)).rows;
    await store.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ('we_old', $1, false, 'https://hooks.example/in', '{lookup.completed}', 'active', '\\x00')`,
      [a.accountId],
    );
    const delivered = await oldEvent(a.accountId, "we_old", new Date(Date.now() - 86_400_000), 2);
    const undispatched = await oldEvent(a.accountId, "we_old", new Date(Date.now() - 1_000), null);
    const oldEnough = await oldEvent(a.accountId, "we_old", new Date(Date.now() - 40 * 86_400_000), 1);
    const attemptsBefore = (await store.pool.query(`SELECT * FROM delivery_attempts ORDER BY id`)).rows;
    const deliveriesBefore = (await store.pool.query(`SELECT * FROM webhook_deliveries ORDER BY id`)).rows;

    await store.pool.query(sqlOf(THIS));
    await store.pool.query(sqlOf(EVENTS));

    // Partitioned, every old row in the legacy partitions, unchanged (id_month aside).
    const kinds = (await store.pool.query(`SELECT relname, relkind FROM pg_class WHERE relname IN ('lookups', 'result_rows') ORDER BY relname`)).rows;
    expect(kinds).toEqual([{ relname: "lookups", relkind: "p" }, { relname: "result_rows", relkind: "p" }]);
    const rowsAfter = (await store.pool.query(`SELECT id, lookup_id, job_id, row_no, kind, input_masked, e164, country, number_status, checks, pending_checks FROM result_rows_legacy ORDER BY id`)).rows;
    expect(rowsAfter).toEqual(rowsBefore);
    expect((await store.pool.query(`SELECT * FROM lookups_legacy ORDER BY id`)).rows).toEqual(lookupsBefore.map((l) => ({ ...l, id_month: expect.any(Date) })));
    expect((await store.pool.query(`SELECT * FROM jobs ORDER BY id`)).rows).toEqual(jobsBefore);
    expect((await store.pool.query(`SELECT DISTINCT id_month::text AS m FROM result_rows`)).rows).toEqual([{ m: "1970-01-01" }]);
    expect((await store.pool.query(`SELECT * FROM delivery_attempts_legacy ORDER BY id`)).rows).toEqual(attemptsBefore.map((r) => ({ ...r, id_month: expect.any(Date) })));
    expect((await store.pool.query(`SELECT * FROM webhook_deliveries ORDER BY id`)).rows).toEqual(deliveriesBefore.map((r) => ({ ...r, id_month: expect.any(Date) })));
    expect((await store.pool.query(`SELECT count(*)::int AS n FROM events_legacy`)).rows[0].n).toBe(3);

    // The dispatcher's and the operators' reads of old events.
    expect(await deliveryLog(store.pool, delivered.id)).toEqual([
      {
        delivery_id: delivered.delivery,
        endpoint_id: "we_old",
        status: "succeeded",
        next_attempt_at: null,
        attempts: [
          expect.objectContaining({ attempt_no: 1, status_code: 503, error: "status 503", succeeded: false }),
          expect.objectContaining({ attempt_no: 2, status_code: 200, error: null, succeeded: true }),
        ],
      },
    ]);
    const [task] = (await planEvent(store.pool, undispatched.id, new Date(), 15_000)) ?? [];
    expect(task).toMatchObject({ event_id: undispatched.id, endpoint_id: "we_old", attempts: 0 });
    expect(await recordAttempt(store.pool, { deliveryId: task!.delivery_id, attemptNo: 1, startedAt: new Date(), durationMs: 9, statusCode: 200, error: null, succeeded: true, retryAt: null, now: new Date() })).toBe("succeeded");
    expect((await deliveryLog(store.pool, undispatched.id))[0]?.attempts).toEqual([expect.objectContaining({ attempt_no: 1, succeeded: true })]);
    // A new event goes to this month's partition, its delivery's attempt with it.
    const freshEvent = await recordEvent(store.pool, { accountId: a.accountId, livemode: false, type: "webhook.test", data: { object: "event" }, endpointId: "we_old", createdAt: new Date() });
    const [freshTask] = (await planEvent(store.pool, freshEvent, new Date(), 15_000)) ?? [];
    await recordAttempt(store.pool, { deliveryId: freshTask!.delivery_id, attemptNo: 1, startedAt: new Date(), durationMs: 9, statusCode: 200, error: null, succeeded: true, retryAt: null, now: new Date() });
    const thisMonth = `${new Date().getUTCFullYear()}_${String(new Date().getUTCMonth() + 1).padStart(2, "0")}`;
    expect((await store.pool.query(`SELECT tableoid::regclass::text AS t FROM delivery_attempts WHERE delivery_id = $1`, [freshTask!.delivery_id])).rows).toEqual([{ t: `delivery_attempts_p${thisMonth}` }]);
    expect((await store.pool.query(`SELECT tableoid::regclass::text AS t FROM events WHERE id = $1`, [freshEvent])).rows).toEqual([{ t: `events_p${thisMonth}` }]);

    // Read through the store as the gateway and workers read them.
    const now = new Date();
    const scopeA = { accountId: a.accountId, livemode: false };
    const first = await getLookup(store.pool, lookups[0]!, scopeA, now);
    expect(first?.lookup).toMatchObject({ id: lookups[0], status: "completed", row_count: 2 });
    expect(first?.rows).toEqual([row(1), row(2)].map(({ ...r }) => ({ ...r })));
    expect((await getLookup(store.pool, lookups[1]!, { accountId: b.accountId, livemode: false }, now))?.rows).toEqual([row(1)]);
    expect(await getLookup(store.pool, lookups[1]!, scopeA, now)).toBeNull();
    expect(await getJob(store.pool, jobs[0]!, { ...scopeA, apiKeyId: null }, now)).toMatchObject({ id: jobs[0], status: "completed", total: 3 });
    expect(await jobRowsPage(store.pool, jobs[0]!, 0, 100, null)).toEqual([row(1), row(2), row(3)]);
    expect((await jobRowsPage(store.pool, jobs[1]!, 1, 100, null)).map((r) => r.row_no)).toEqual([2]);
    expect((await chunkRows(store.pool, jobs[0]!, 2, 3)).map((r) => r.row_no)).toEqual([2, 3]);

    // An old pending lookup completes in place.
    const done = await withTransaction(store.pool, (client) =>
      completeLookup(client, pending, [1, 2].map((n) => ({ row_no: n, checks: row(n).checks })), now),
    );
    expect(done?.status).toBe("completed");
    expect((await getLookup(store.pool, pending, scopeA, now))?.rows.map((r) => r.checks[0]?.status)).toEqual(["ok", "ok"]);

    // A new lookup goes to this month's partition, with a row id from the same sequence.
    const fresh = newId("lookup");
    await insertLookup(store.pool, {
      id: fresh, accountId: a.accountId, apiKeyId: a.keyId, livemode: false, status: "completed", checks: ["number.spam"], checksTotal: 1,
      webhookEndpointId: null, requestId: "req_new", createdAt: now, completedAt: now, completesAt: null, expiresAt: week, rows: [row(1)],
    });
    const month = `${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, "0")}`;
    const { rows: placed } = await store.pool.query(`SELECT tableoid::regclass::text AS t, id FROM result_rows WHERE lookup_id = $1`, [fresh]);
    expect(placed).toEqual([{ t: `result_rows_p${month}`, id: expect.anything() }]);
    expect(BigInt(placed[0].id)).toBeGreaterThan(BigInt(rowsBefore[rowsBefore.length - 1].id));
    expect((await getLookup(store.pool, fresh, scopeA, now))?.rows).toEqual([row(1)]);

    // The previous release, still running during the roll-out, keeps writing (its rows go to the legacy partition) and today's reads find them.
    const written = await oldLookup(a, "completed", week, [row(1), row(2)]);
    const late = await oldJob(a, week, [row(1)]);
    expect((await getLookup(store.pool, written, scopeA, now))?.rows).toEqual([row(1), row(2)]);
    expect(await jobRowsPage(store.pool, late, 0, 100, null)).toEqual([row(1)]);
    expect((await store.pool.query(`SELECT DISTINCT tableoid::regclass::text AS t FROM result_rows WHERE lookup_id = $1 OR job_id = $2`, [written, late])).rows).toEqual([{ t: "result_rows_legacy" }]);

    // Retention deletes an expired old lookup row by row, with its rows; deleting an old job deletes its rows;
    // an old event past 30 days goes row by row with its delivery and attempts.
    await purgeExpired(store.pool, now);
    expect(await deliveryLog(store.pool, oldEnough.id)).toEqual([]);
    expect((await store.pool.query(`SELECT count(*)::int AS n FROM delivery_attempts WHERE delivery_id = $1`, [oldEnough.delivery])).rows[0].n).toBe(0);
    expect(await deliveryLog(store.pool, delivered.id)).toHaveLength(1);
    expect(await getLookup(store.pool, expired, scopeA, new Date(0))).toBeNull();
    expect((await store.pool.query(`SELECT count(*)::int AS n FROM result_rows WHERE lookup_id = $1`, [expired])).rows[0].n).toBe(0);
    await store.pool.query(`DELETE FROM jobs WHERE id = $1`, [jobs[0]]);
    expect(await jobRowsPage(store.pool, jobs[0]!, 0, 100, null)).toEqual([]);
    expect(await jobRowsPage(store.pool, jobs[1]!, 0, 100, null)).toHaveLength(2);
    expect((await getLookup(store.pool, lookups[0]!, scopeA, now))?.rows).toHaveLength(2);
  });
});
