import type { Sql } from "./db";
import { idMonth } from "@svc/domain";
import { lookupRecordOf, storedRowRecord, type NewLookup } from "./lookups";
import { testUsageRows } from "./usage";

/** One daily_usage row's increments: a batch's usage summed per (account, key, day, check). */
type UsageSum = { account: string; key: string; day: string; check: string; identifiers: number; checks: number; conclusive: number };

/**
 * Sums the batch's usage per row of daily_usage: one statement's ON CONFLICT DO UPDATE
 * cannot touch a row twice, and lookups of one key on one day all count on the same rows.
 */
function summedUsage(lookups: readonly NewLookup[]): UsageSum[] {
  const sums = new Map<string, UsageSum>();
  for (const l of lookups) {
    if (!l.usage) continue;
    const day = l.usage.day;
    for (const u of testUsageRows(l.usage)) {
      const id = `${l.accountId}\u0000${l.apiKeyId}\u0000${day}\u0000${u.check}`;
      let sum = sums.get(id);
      if (!sum) sums.set(id, (sum = { account: l.accountId, key: l.apiKeyId, day, check: u.check, identifiers: 0, checks: 0, conclusive: 0 }));
      // Identifiers are counted on the "*" row, as testUsageUpsert does.
      if (u.check === "*") sum.identifiers += l.usage.identifiers;
      sum.checks += u.checks;
      sum.conclusive += u.conclusive;
    }
  }
  return [...sums.values()];
}

/** The batch as the `jsonb_to_recordset` parameter: each lookup with its rows, in the columns insertLookup writes. */
function lookupsJson(lookups: readonly NewLookup[]): string {
  return JSON.stringify(
    // The record a read gives, and what only the insert writes (columns not named by the statement are ignored).
    lookups.map((l) => ({
      ...lookupRecordOf(l),
      checks_done: l.status === "completed" ? l.checksTotal : 0,
      request_id: l.requestId,
      id_month: idMonth(l.id),
      rows: l.rows.map(storedRowRecord),
    })),
  );
}

/**
 * Inserts several test-mode lookups, all their rows and their summed usage in one
 * statement (group commit: one round trip and one WAL flush for many requests); all
 * or nothing, so a caller whose batch fails can store its lookups one by one with
 * insertLookup. The usage rows are upserted in one stable order (account, key, day,
 * check): two batches lock shared counters in the same order and cannot deadlock
 * each other. Test mode only: usage is counted with livemode = false.
 */
export async function insertTestLookups(sql: Sql, lookups: readonly NewLookup[]): Promise<void> {
  if (lookups.length === 0) return;
  const usage = summedUsage(lookups);
  // Named: prepared once per connection, like insertLookup (the text does not depend on the batch size).
  await sql.query({
    name: "insert-test-lookups",
    text: `WITH batch AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS l(id text, account_id text, api_key_id text, livemode boolean, status text, checks text[],
         row_count int, checks_total int, checks_done int, webhook_endpoint_id text, request_id text, created_at timestamptz,
         completed_at timestamptz, completes_at timestamptz, expires_at timestamptz, id_month date, rows jsonb)),
     lookup AS (
       INSERT INTO lookups (id, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done,
                            webhook_endpoint_id, request_id, created_at, completed_at, completes_at, expires_at, id_month)
       SELECT id, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done,
              webhook_endpoint_id, request_id, created_at, completed_at, completes_at, expires_at, id_month
       FROM batch
       RETURNING id, id_month),
     stored_rows AS (
       INSERT INTO result_rows (lookup_id, id_month, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
       SELECT lookup.id, lookup.id_month, r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks, r.pending_checks
       FROM lookup JOIN batch ON batch.id = lookup.id,
            jsonb_to_recordset(batch.rows) AS r(row_no int, kind text, input_masked text, e164 text, country text,
              number_status text, email text, email_status text, checks jsonb, pending_checks int)
       RETURNING 1),
     usage AS (
       INSERT INTO daily_usage AS d (account_id, api_key_id, day, livemode, check_code, identifiers, checks, conclusive)
       SELECT a, k, day, false, c, i, n, ok
       FROM unnest($2::text[], $3::text[], $4::date[], $5::text[], $6::int[], $7::int[], $8::int[]) AS t(a, k, day, c, i, n, ok)
       ORDER BY a, k, day, c
       ON CONFLICT (account_id, api_key_id, day, livemode, check_code) DO UPDATE SET
         identifiers = d.identifiers + EXCLUDED.identifiers, checks = d.checks + EXCLUDED.checks, conclusive = d.conclusive + EXCLUDED.conclusive)
     SELECT 1`,
    values: [
      lookupsJson(lookups),
      usage.map((u) => u.account),
      usage.map((u) => u.key),
      usage.map((u) => u.day),
      usage.map((u) => u.check),
      usage.map((u) => u.identifiers),
      usage.map((u) => u.checks),
      usage.map((u) => u.conclusive),
    ],
  });
}
