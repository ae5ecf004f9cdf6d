import { LEGACY_MONTH } from "@svc/domain";
import type { Sql } from "./db";
import { EVENT_RETENTION_DAYS, overdueEventMonths, PARTITION_LINGER_MS, rowDeleteCutoffs } from "./partitions";

export type PurgeCounts = { lookups: number; jobs: number; cache: number; idempotency: number; usage: number; events: number; testKeyRequests: number };

/** Refused test-key requests (an address and a name) are kept as long as the 3-in-30-days rule needs them. */
const REFUSED_TEST_KEY_REQUEST_DAYS = 30;

/**
 * Deletes what has passed its retention period, in small batches so it never holds
 * long locks: lookups and finished jobs (with their rows: a lookup's by the trigger
 * lookups_delete_result_rows, a job's by jobs_delete_result_rows), expired cache entries
 * and idempotency records, usage days older than the account's retention, and
 * webhook events from before partitioning (with deliveries and attempts) older than
 * EVENT_RETENTION_DAYS, and
 * refused test-key requests past the 30 days their rule looks back (issued ones are
 * the key's sign-up record and stay).
 * Safe to run from every replica at once (SKIP LOCKED).
 *
 * Lookups and job rows of a month wholly past retention are not deleted here but
 * dropped with their partition (maintainPartitions, the schema owner's upkeep), and
 * expired ones whose month will be dropped within PARTITION_LINGER_MS of their
 * expiry wait for it (reads no longer show them); this deletes the expired rows of
 * months that hold rows kept much longer (accounts keep their data for different
 * numbers of days), and of the legacy partition. A month whose drop is overdue
 * (PARTITION_DROP_OVERDUE_MS: the upkeep is not running) has its expired rows, and its
 * events, deleted here row by row: retention never depends on the upkeep.
 */
export async function purgeExpired(sql: Sql, now: Date, options: { batch?: number; lingerMs?: number } = {}): Promise<PurgeCounts> {
  const batch = options.batch ?? 1_000;
  // Expired rows whose month will be dropped soon wait for it (rowDeleteCutoffs).
  // A month whose drop is overdue waits no longer: up to now, like any other month's past rows.
  const cutoffs = (await rowDeleteCutoffs(sql, options.lingerMs ?? PARTITION_LINGER_MS)).map((c) => ({ ...c, cutoff: c.cutoff < now && c.overdueAt > now ? c.cutoff : now }));
  // Each month partition is searched on its own expires_at index up to its own cutoff, so
  // the expired rows waiting for their month (about a month of traffic) are never read;
  // the legacy partition (ids without a month) up to now.
  const months = [...cutoffs.map((c) => ({ month: c.month, cutoff: c.cutoff })), { month: LEGACY_MONTH, cutoff: now }];
  const lookups = await sql.query(
    // With the partition key, so each deleted lookup is found in its own partition.
    `DELETE FROM lookups WHERE (id, id_month) IN (
       SELECT l.id, l.id_month FROM unnest($2::date[], $3::timestamptz[]) AS c(m, cutoff)
       CROSS JOIN LATERAL (SELECT id, id_month FROM lookups WHERE id_month = c.m AND expires_at <= c.cutoff LIMIT $1 FOR UPDATE SKIP LOCKED) l
       LIMIT $1)`,
    [batch, months.map((m) => m.month), months.map((m) => m.cutoff)],
  );
  const jobs = await sql.query(
    // A job waits as its month's lookups do: its rows then go with the month's result_rows partition.
    `DELETE FROM jobs WHERE id IN (
       SELECT j.id FROM jobs j WHERE j.expires_at <= $1 AND j.status IN ('completed', 'failed', 'cancelled')
         AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[], $5::int[], $6::timestamptz[]) AS c(lo, hi, len, cutoff)
                         WHERE j.id COLLATE "C" >= c.lo AND j.id COLLATE "C" < c.hi AND length(j.id) = c.len AND j.expires_at > c.cutoff)
       LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch, cutoffs.map((c) => c.jobs.from), cutoffs.map((c) => c.jobs.to), cutoffs.map((c) => c.jobs.length), cutoffs.map((c) => c.cutoff)],
  );
  const cache = await sql.query(
    `DELETE FROM check_cache WHERE (check_code, identifier_hash) IN (SELECT check_code, identifier_hash FROM check_cache WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch * 10],
  );
  const idempotency = await sql.query(
    // The whole primary key: records of other API keys with the same key string are not this one.
    `DELETE FROM idempotency_records WHERE (account_id, caller_scope, key) IN
       (SELECT account_id, caller_scope, key FROM idempotency_records WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch * 10],
  );
  const usage = await sql.query(
    `DELETE FROM daily_usage d USING accounts a
     WHERE a.id = d.account_id AND d.day < ($1::timestamptz AT TIME ZONE 'UTC')::date - a.retention_days`,
    [now],
  );
  const events = await sql.query(
    `DELETE FROM events WHERE id_month = '1970-01-01' AND id IN (SELECT id FROM events WHERE id_month = '1970-01-01'
       AND created_at <= $1::timestamptz - make_interval(days => $3) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch, EVENT_RETENTION_DAYS],
  );
  // Months of events whose drop is overdue: every event in them is past retention.
  const overdue = await overdueEventMonths(sql, now);
  const overdueEvents = overdue.length === 0
    ? { rowCount: 0 }
    : await sql.query(
        `DELETE FROM events WHERE (id, id_month) IN (SELECT id, id_month FROM events WHERE id_month = ANY($1::date[]) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [overdue, batch],
      );
  const testKeyRequests = await sql.query(
    `DELETE FROM test_key_requests WHERE id IN (SELECT id FROM test_key_requests
       WHERE outcome <> 'issued' AND created_at <= $1::timestamptz - make_interval(days => $3) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch, REFUSED_TEST_KEY_REQUEST_DAYS],
  );
  return {
    lookups: lookups.rowCount ?? 0,
    jobs: jobs.rowCount ?? 0,
    cache: cache.rowCount ?? 0,
    idempotency: idempotency.rowCount ?? 0,
    usage: usage.rowCount ?? 0,
    events: (events.rowCount ?? 0) + (overdueEvents.rowCount ?? 0),
    testKeyRequests: testKeyRequests.rowCount ?? 0,
  };
}
