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
