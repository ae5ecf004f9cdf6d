import type pg from "pg";
import type { Sql } from "./db";

export type UsageFigures = { checks: number; conclusive: number; cached: number; billed_units: number; cost_micros: bigint };
export type UsageRow = UsageFigures & { key: string };

/**
 * Usage of an account in one mode between two UTC days (inclusive), grouped by
 * day or by check. Days before `notBefore` (the retention horizon) are not counted.
 */
export async function usageBetween(
  sql: Sql,
  q: { accountId: string; livemode: boolean; from: string; to: string; notBefore: string; groupBy: "day" | "check" },
): Promise<UsageRow[]> {
  const key = q.groupBy === "day" ? "to_char(day, 'YYYY-MM-DD')" : "check_code";
  const { rows } = await sql.query<UsageRow>(
    `SELECT ${key} AS key, sum(checks)::int AS checks, sum(conclusive)::int AS conclusive, sum(cached)::int AS cached,
            sum(billed_units)::int AS billed_units, sum(cost_micros)::bigint AS cost_micros
     FROM daily_usage
     WHERE account_id = $1 AND livemode = $2 AND day BETWEEN GREATEST($3::date, $5::date) AND $4::date AND check_code <> '*'
     GROUP BY 1 ORDER BY 1`,
    [q.accountId, q.livemode, q.from, q.to, q.notBefore],
  );
  return rows;
}

/** Today's figures for GET /v1/account: identifiers, checks, conclusive answers and spend. */
export async function usageToday(
  sql: Sql,
  accountId: string,
  livemode: boolean,
  day: string,
): Promise<{ identifiers: number; checks: number; conclusive: number; cost_micros: bigint }> {
  const { rows } = await sql.query<{ identifiers: number; checks: number; conclusive: number; cost_micros: bigint }>(
    `SELECT COALESCE(sum(identifiers), 0)::int AS identifiers, COALESCE(sum(checks), 0)::int AS checks,
            COALESCE(sum(conclusive), 0)::int AS conclusive, COALESCE(sum(cost_micros), 0)::bigint AS cost_micros
     FROM daily_usage WHERE account_id = $1 AND livemode = $2 AND day = $3::date`,
    [accountId, livemode, day],
  );
  return rows[0] ?? { identifiers: 0, checks: 0, conclusive: 0, cost_micros: 0n };
}

/** Test-mode usage of one request: checks and conclusive answers per check, and identifiers. */
export type TestUsage = { day: string; checks: Array<{ check: string; checks: number; conclusive: number }>; identifiers: number };

/**
 * The upsert that counts test-mode usage, with its parameters at the given
 * positions: account, key, day, check codes[], checks[], conclusive[], identifiers.
 * Identifiers are counted on the "*" row. One text for lookups (inside their
 * one-statement insert) and jobs. Rows are locked in check order, the order the
 * group-committed batches use (insertTestLookups), so a batch and a single insert of
 * the same key and day cannot deadlock on the counters.
 */
export function testUsageUpsert(p: { account: number; key: number; day: number; codes: number; checks: number; conclusive: number; identifiers: number }): string {
  return `INSERT INTO daily_usage AS d (account_id, api_key_id, day, livemode, check_code, identifiers, checks, conclusive)
       SELECT $${p.account}, $${p.key}, $${p.day}::date, false, c, CASE WHEN c = '*' THEN $${p.identifiers}::int ELSE 0 END, n, k
       FROM unnest($${p.codes}::text[], $${p.checks}::int[], $${p.conclusive}::int[]) AS t(c, n, k)
       ORDER BY c
       ON CONFLICT (account_id, api_key_id, day, livemode, check_code) DO UPDATE SET
         identifiers = d.identifiers + EXCLUDED.identifiers, checks = d.checks + EXCLUDED.checks, conclusive = d.conclusive + EXCLUDED.conclusive`;
}

/** The per-check rows plus the "*" row that carries the identifiers. */
export function testUsageRows(usage: TestUsage | undefined): Array<{ check: string; checks: number; conclusive: number }> {
  return usage ? [...usage.checks, { check: "*", checks: 0, conclusive: 0 }] : [];
}

/** Counts a test-mode job's usage (in the job's transaction). */
export async function recordTestUsage(client: pg.PoolClient, owner: { accountId: string; apiKeyId: string }, usage: TestUsage): Promise<void> {
  const rows = testUsageRows(usage);
  await client.query(testUsageUpsert({ account: 1, key: 2, day: 3, codes: 4, checks: 5, conclusive: 6, identifiers: 7 }), [
    owner.accountId,
    owner.apiKeyId,
    usage.day,
    rows.map((u) => u.check),
    rows.map((u) => u.checks),
    rows.map((u) => u.conclusive),
    usage.identifiers,
  ]);
}
