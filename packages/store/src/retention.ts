import type { Sql } from "./db";

export type PurgeCounts = { lookups: number; jobs: number; cache: number; idempotency: number; usage: number; events: number; testKeyRequests: number };

/** Refused test-key requests (an address and a name) are kept as long as the 3-in-30-days rule needs them. */
const REFUSED_TEST_KEY_REQUEST_DAYS = 30;

/** Events, their deliveries and attempts are kept this long (deliveries end within 24 h). */
export const EVENT_RETENTION_DAYS = 30;

/**
 * Deletes what has passed its retention period, in small batches so it never holds
 * long locks: lookups and finished jobs (with their rows: a lookup's by foreign key,
 * a job's by the trigger jobs_delete_result_rows), expired cache entries
 * and idempotency records, usage days older than the account's retention, and
 * webhook events (with deliveries and attempts) older than EVENT_RETENTION_DAYS, and
 * refused test-key requests past the 30 days their rule looks back (issued ones are
 * the key's sign-up record and stay).
 * Safe to run from every replica at once (SKIP LOCKED).
 */
export async function purgeExpired(sql: Sql, now: Date, batch = 1_000): Promise<PurgeCounts> {
  const lookups = await sql.query(
    `DELETE FROM lookups WHERE id IN (SELECT id FROM lookups WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch],
  );
  const jobs = await sql.query(
    `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE expires_at <= $1 AND status IN ('completed', 'failed', 'cancelled') LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch],
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
    `DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at <= $1::timestamptz - make_interval(days => $3) LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [now, batch, EVENT_RETENTION_DAYS],
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
    events: events.rowCount ?? 0,
    testKeyRequests: testKeyRequests.rowCount ?? 0,
  };
}
