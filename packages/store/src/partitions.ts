import type pg from "pg";
import { firstIdAt, monthStart } from "@svc/domain";
import { withTransaction, type Sql } from "./db";

/**
 * Month partitions (docs/partitioning.md) of `lookups` and `result_rows`, and of
 * `events` and `delivery_attempts`. Each table is partitioned by `id_month`, the UTC
 * month a lookup's, job's or event's time-ordered id was made in; a job's or lookup's
 * rows take their parent's month, a delivery and its attempts their event's. The
 * partitions `<table>_pYYYY_MM` cover one month each; `<table>_legacy` holds
 * everything from before partitioning (ids without a time) and is never dropped.
 */

/**
 * Events, their deliveries and attempts are kept at least this long (deliveries end
 * within 24 h). They hold no personal data, so they go by the month: a month's
 * partitions are dropped once its newest event is this old (dropExpiredPartitions),
 * at most a month later than a row-by-row rule would have; only events from before
 * partitioning (the legacy partition) are still deleted row by row (purgeExpired).
 */
export const EVENT_RETENTION_DAYS = 30;

/** Months made ahead of the current one: inserts never wait on a missing partition while a worker is down for weeks. */
export const PARTITION_MONTHS_AHEAD = 2;

/**
 * A month is dropped only this long after it ended: an id is made by the gateway's
 * clock, so a gateway whose clock lags may still file a row under a month that just
 * ended on the worker's clock.
 */
export const PARTITION_DROP_GRACE_MS = 24 * 60 * 60 * 1000;

const PARTITIONED = ["lookups", "result_rows", "events", "delivery_attempts"] as const;
const MONTH_PARTITION = /^(lookups|result_rows|events|delivery_attempts)_p(\d{4})_(\d{2})$/;

/** The first day of the month `n` months after the one `at` falls in (UTC). */
function monthAfter(at: Date, n: number): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + n, 1));
}

/**
 * Makes the partitions (all four tables) of this month and the next PARTITION_MONTHS_AHEAD months that
 * do not exist yet (svc_create_month_partitions: made empty, then attached, so the
 * parents stay readable and writable). Idempotent and safe from every replica at
 * once. Returns the months it made partitions for (`YYYY-MM-01`).
 */
export async function ensureMonthPartitions(pool: pg.Pool, now: Date, ahead = PARTITION_MONTHS_AHEAD): Promise<string[]> {
  const made: string[] = [];
  for (let n = 0; n <= ahead; n++) {
    const month = monthStart(monthAfter(now, n));
    const { rows } = await retryOnLockTimeout(() =>
      withTransaction(pool, async (client) => {
        await client.query(`SET LOCAL lock_timeout = ${PARTITION_LOCK_TIMEOUT_MS}`);
        return client.query<{ made: number }>(`SELECT svc_create_month_partitions($1::date) AS made`, [month]);
      }),
    );
    if ((rows[0]?.made ?? 0) > 0) made.push(month);
  }
  return made;
}

/**
 * Attaching, detaching and dropping a partition of lookups, events or
 * delivery_attempts lock the tables its foreign keys reference (accounts and api_keys
 * in SHARE ROW EXCLUSIVE, and ACCESS EXCLUSIVE for the drop of a detached table;
 * webhook_deliveries) until done. While such a statement waits behind a long
 * transaction, every request touching those tables queues behind it: so it waits at
 * most this long, and is tried again a few times (LOCK_ATTEMPTS) and otherwise at the
 * next sweep (months are made PARTITION_MONTHS_AHEAD ahead, drops can wait). A request
 * is held up by at most this, once per attempt.
 */
export const PARTITION_LOCK_TIMEOUT_MS = 250;
const LOCK_ATTEMPTS = 5;
const LOCK_RETRY_PAUSE_MS = 500;

/**
 * result_rows has no foreign keys: detaching one of its months blocks no reads or
 * writes (SHARE UPDATE EXCLUSIVE on the parent), but DETACH … CONCURRENTLY waits for
 * every transaction that reads the parent, a streamed download included. It may wait
 * this long, so that downloads always under way do not keep a month from going.
 */
export const RESULT_ROWS_DETACH_WAIT_MS = 60_000;

/** Runs `work` again after a pause when it failed on lock_timeout (55P03), up to LOCK_ATTEMPTS times; not once `stopping`. */
async function retryOnLockTimeout<T>(work: () => Promise<T>, stopping?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (err) {
      if ((err as { code?: string }).code !== "55P03" || attempt >= LOCK_ATTEMPTS || stopping?.aborted) throw err;
      await new Promise((r) => setTimeout(r, LOCK_RETRY_PAUSE_MS));
    }
  }
}

/**
 * Runs `statement` on `client`, cancelling it (pg_cancel_backend, from another pool
 * connection) if `stopping` aborts meanwhile: a service shutting down does not wait out
 * a long lock wait. A cancelled detach is left pending and finished by the next run.
 */
async function cancellable(pool: pg.Pool, client: pg.PoolClient, statement: string, stopping?: AbortSignal): Promise<void> {
  if (stopping?.aborted) throw new Error("stopping");
  const pid = (client as unknown as { processID: number }).processID;
  const cancel = () => void pool.query(`SELECT pg_cancel_backend($1)`, [pid]).catch(() => undefined);
  stopping?.addEventListener("abort", cancel, { once: true });
  try {
    await client.query(statement);
  } finally {
    stopping?.removeEventListener("abort", cancel);
  }
}

/** Deliveries of a dropped event month deleted per statement: short transactions, not one for the month. */
const DELIVERY_DELETE_BATCH = 5_000;

type MonthPartition = { table: (typeof PARTITIONED)[number]; name: string; month: string; detachPending: boolean };

/** The month partitions attached to (or being detached from) the two parents. */
async function monthPartitions(sql: Sql): Promise<MonthPartition[]> {
  const { rows } = await sql.query<{ parent: string; name: string; detach_pending: boolean }>(
    `SELECT p.relname AS parent, c.relname AS name, i.inhdetachpending AS detach_pending
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = ANY($1::text[]) AND p.relnamespace = current_schema()::regnamespace`,
    [PARTITIONED],
  );
  const out: MonthPartition[] = [];
  for (const r of rows) {
    const m = MONTH_PARTITION.exec(r.name);
    if (!m || m[1] !== r.parent) continue;
    out.push({ table: r.parent as MonthPartition["table"], name: r.name, month: `${m[2]}-${m[3]}-01`, detachPending: r.detach_pending });
  }
  return out;
}

/**
 * Whether every row filed under `month` has passed its retention: the month ended
 * (plus the grace), no lookup of the month expires after `now`, and every job of the
 * month is finished and expired — exactly the rows purgeExpired would delete one by
 * one. Jobs are not partitioned: a job's month is read from its id (time-ordered ids
 * of a month lie between two prefixes, compared byte by byte).
 */
export async function monthExpired(sql: Sql, month: string, now: Date): Promise<boolean> {
  const start = new Date(`${month}T00:00:00.000Z`);
  const end = monthAfter(start, 1);
  if (end.getTime() + PARTITION_DROP_GRACE_MS > now.getTime()) return false;
  const jobs = jobIdsOf(month);
  const { rows } = await sql.query<{ live: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM lookups WHERE id_month = $1::date AND expires_at > $2)
         OR EXISTS (SELECT 1 FROM jobs WHERE id COLLATE "C" >= $3 AND id COLLATE "C" < $4 AND length(id) = $5
                      AND (expires_at > $2 OR status NOT IN ('completed', 'failed', 'cancelled'))) AS live`,
    [month, now, jobs.from, jobs.to, jobs.length],
  );
  return rows[0]?.live === false;
}

/**
 * The time-ordered job ids made in `month`: those between two prefixes, compared byte by
 * byte (COLLATE "C"), of the time-ordered ids' length (older random ids are shorter).
 */
export function jobIdsOf(month: string): { from: string; to: string; length: number } {
  const start = new Date(`${month}T00:00:00.000Z`);
  const from = firstIdAt("job", start);
  return { from, to: firstIdAt("job", monthAfter(start, 1)), length: from.length + 18 };
}

/**
 * How long an expired lookup or job may wait, by default, for its month's partitions to
 * be dropped instead of being deleted row by row (the check-worker's RETENTION_LINGER_DAYS).
 * Reads stop showing a row the moment it expires (every read filters on expires_at), so
 * waiting only delays when its storage goes; a month's rows expire over about a month
 * when every account keeps the same number of days, so with one retention period
 * nothing is deleted row by row at all.
 */
export const PARTITION_LINGER_MS = 31 * 86_400_000;

/**
 * How late a month's drop may be before its rows are deleted row by row after all: the
 * owner's partition upkeep runs hourly, so a month still there a day after its drop was
 * due means the upkeep does not run (not deployed, or failing), and retention must not
 * wait for it.
 */
export const PARTITION_DROP_OVERDUE_MS = 24 * 60 * 60 * 1000;

/**
 * A month partition of lookups/result_rows, the expiry up to which its rows are deleted
 * row by row, and when its drop is overdue (from then on every expired row is).
 */
export type RowDeleteCutoff = { month: string; cutoff: Date; overdueAt: Date; jobs: { from: string; to: string; length: number } };

/**
 * For each month partition of `lookups`: rows that expire at or before `cutoff` are
 * deleted row by row (purgeExpired); later ones wait for the month to be dropped. The
 * month is dropped once its last lookup and job have expired (monthExpired), so a row
 * waits when that moment is at most `lingerMs` after its own expiry (0: none waits). Rows of
 * a month shared with accounts that keep data much longer, and the legacy partition's,
 * are deleted row by row as before.
 */
export async function rowDeleteCutoffs(sql: Sql, lingerMs = PARTITION_LINGER_MS): Promise<RowDeleteCutoff[]> {
  const months = [...new Set((await monthPartitions(sql)).filter((p) => p.table === "lookups" && !p.detachPending).map((p) => p.month))].sort();
  if (months.length === 0) return [];
  const ranges = months.map(jobIdsOf);
  // Per month: its lookups partition's latest expiry (its expires_at index) and its jobs' (their id range on
  // jobs_id_bytewise_idx, byte by byte). One subquery per month: a join of all months against all jobs would
  // match every job with every month.
  const { rows } = await sql.query<{ month: string; last: Date | null }>(
    `SELECT to_char(c.m, 'YYYY-MM-DD') AS month,
            GREATEST((SELECT max(l.expires_at) FROM lookups l WHERE l.id_month = c.m),
                     (SELECT max(j.expires_at) FROM jobs j WHERE j.id COLLATE "C" >= c.lo AND j.id COLLATE "C" < c.hi AND length(j.id) = c.len)) AS last
     FROM unnest($1::date[], $2::text[], $3::text[], $4::int[]) AS c(m, lo, hi, len)`,
    [months, ranges.map((r) => r.from), ranges.map((r) => r.to), ranges.map((r) => r.length)],
  );
  return rows.map((r) => {
    const end = monthAfter(new Date(`${r.month}T00:00:00.000Z`), 1).getTime() + PARTITION_DROP_GRACE_MS;
    const droppedAt = Math.max(end, r.last?.getTime() ?? 0);
    return { month: r.month, cutoff: new Date(droppedAt - lingerMs), overdueAt: new Date(droppedAt + PARTITION_DROP_OVERDUE_MS), jobs: jobIdsOf(r.month) };
  });
}

/**
 * Whether every event of `month` (with its deliveries and attempts) is past
 * EVENT_RETENTION_DAYS: the month ended that many days ago, plus the grace. Events
 * all keep the same number of days, so their month's age is enough.
 */
export function eventMonthExpired(month: string, now: Date): boolean {
  return eventMonthDropDue(month) <= now.getTime();
}

/** When `month`'s events are all past retention (ms since the epoch): their partitions may go. */
function eventMonthDropDue(month: string): number {
  const end = monthAfter(new Date(`${month}T00:00:00.000Z`), 1);
  return end.getTime() + EVENT_RETENTION_DAYS * 86_400_000 + PARTITION_DROP_GRACE_MS;
}

/** Months of events whose partitions should have been dropped PARTITION_DROP_OVERDUE_MS ago: their rows go row by row. */
export async function overdueEventMonths(sql: Sql, now: Date): Promise<string[]> {
  const parts = (await monthPartitions(sql)).filter((p) => p.table === "events");
  return [...new Set(parts.map((p) => p.month))].filter((m) => eventMonthDropDue(m) + PARTITION_DROP_OVERDUE_MS <= now.getTime()).sort();
}

export type DroppedMonth = { month: string; tables: string[] };

/**
 * Drops the month partitions whose every row has passed its retention: result_rows'
 * then lookups' (monthExpired); delivery_attempts', then the month's deliveries (a
 * plain table: deleted in one statement, found through the month's events), then events' (eventMonthExpired). Each
 * partition is detached CONCURRENTLY (the parent stays
 * readable and writable: SHARE UPDATE EXCLUSIVE, not ACCESS EXCLUSIVE) and then
 * dropped as a table of its own, so its rows go without a row-by-row DELETE, without
 * dead tuples to vacuum. One replica at a time (an advisory lock; the others skip).
 * A detach cut short by a crash is finished (FINALIZE), and a table detached but not
 * dropped is dropped, on the next run. Needs a pool: DETACH CONCURRENTLY cannot run
 * inside a transaction.
 */
export async function dropExpiredPartitions(pool: pg.Pool, now: Date, stopping?: AbortSignal): Promise<DroppedMonth[]> {
  const client = await pool.connect();
  const dropped: DroppedMonth[] = [];
  let locked = false;
  try {
    const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('svc_drop_month_partitions')) AS ok`);
    locked = rows[0]?.ok === true;
    if (!locked) return dropped;
    const lockTimeout = (ms: number) => client.query(`SET lock_timeout = ${ms}`);
    await lockTimeout(PARTITION_LOCK_TIMEOUT_MS);
    // Leftovers of a run cut short: detached month tables not dropped yet.
    const { rows: orphans } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c
       WHERE c.relkind = 'r' AND NOT c.relispartition AND c.relnamespace = current_schema()::regnamespace
         AND c.relname ~ '^(lookups|result_rows|events|delivery_attempts)_p[0-9]{4}_[0-9]{2}$'`,
    );
    for (const o of orphans) await retryOnLockTimeout(() => client.query(`DROP TABLE IF EXISTS "${o.name}"`), stopping);
    const parts = await monthPartitions(client);
    const drop = async (table: MonthPartition["table"], month: string, tables: string[]) => {
      const part = parts.find((p) => p.table === table && p.month === month);
      if (!part) return;
      // Names come from the catalogue and match MONTH_PARTITION: safe to quote as identifiers.
      await retryOnLockTimeout(async () => {
        // Where the last attempt left it: a detach cut short by its lock timeout is pending, and is finished.
        const current = (await monthPartitions(client)).find((p) => p.name === part.name);
        if (!current) return;
        if (table === "result_rows") await lockTimeout(RESULT_ROWS_DETACH_WAIT_MS);
        try {
          await cancellable(pool, client, `ALTER TABLE "${table}" DETACH PARTITION "${part.name}" ${current.detachPending ? "FINALIZE" : "CONCURRENTLY"}`, stopping);
        } finally {
          if (table === "result_rows") await lockTimeout(PARTITION_LOCK_TIMEOUT_MS);
        }
      }, stopping);
      await retryOnLockTimeout(() => client.query(`DROP TABLE "${part.name}"`), stopping);
      tables.push(part.name);
    };
    const months = [...new Set(parts.map((p) => p.month))].sort();
    for (const month of months) {
      const tables: string[] = [];
      const has = (t: MonthPartition["table"]) => parts.some((p) => p.table === t && p.month === month);
      if ((has("result_rows") || has("lookups")) && (await monthExpired(client, month, now))) {
        await drop("result_rows", month, tables);
        await drop("lookups", month, tables);
      }
      if ((has("delivery_attempts") || has("events")) && eventMonthExpired(month, now)) {
        await drop("delivery_attempts", month, tables);
        // By their events (one partition, then the (event_id, endpoint_id) index): also finds a delivery that a
        // previous release's dispatcher planned during the roll-out, filed under the legacy month.
        for (;;) {
          const { rowCount } = await client.query(
            `DELETE FROM webhook_deliveries WHERE id IN (
               SELECT w.id FROM webhook_deliveries w JOIN events e ON w.event_id = e.id WHERE e.id_month = $1::date LIMIT $2)`,
            [month, DELIVERY_DELETE_BATCH],
          );
          if ((rowCount ?? 0) < DELIVERY_DELETE_BATCH) break;
        }
        await drop("events", month, tables);
      }
      if (tables.length > 0) dropped.push({ month, tables });
    }
    return dropped;
  } finally {
    if (locked) await client.query(`RESET lock_timeout; SELECT pg_advisory_unlock(hashtext('svc_drop_month_partitions'))`).catch(() => undefined);
    client.release();
  }
}

/**
 * The schema owner's partition upkeep (scripts/partition-upkeep.mjs, hourly): make the
 * coming months' partitions, then drop the months wholly past retention (detaching
 * needs the tables' owner). What is left past retention in months still holding live
 * rows is deleted row by row by the check-worker (purgeExpired), which also makes the
 * coming months' partitions itself (ensureMonthPartitions, through a function of the owner's).
 */
export async function maintainPartitions(pool: pg.Pool, now: Date, stopping?: AbortSignal): Promise<{ created: string[]; dropped: DroppedMonth[] }> {
  const created = await ensureMonthPartitions(pool, now);
  const dropped = await dropExpiredPartitions(pool, now, stopping);
  return { created, dropped };
}
