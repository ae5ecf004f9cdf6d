import type { CheckCode } from "@svc/domain";
import type { Sql } from "./db";

/**
 * What the store holds that decides whether live checks answer well (the admin CLI's
 * `doctor`, docs/going-live.md): the spam-report and carrier-block imports, the live
 * prices and the per-account switches. Small tables only: no count over the reports.
 */
export type ImportSummary = { source: string; imports: number; last_import_at: Date; last_rows: number };

/** Per spam-report source (`spam_imports.source`): how many imports, the latest one's time and rows added. */
export async function spamImportSummary(sql: Sql): Promise<ImportSummary[]> {
  const { rows } = await sql.query<ImportSummary>(
    `SELECT DISTINCT ON (source) source, count(*) OVER (PARTITION BY source)::int AS imports, created_at AS last_import_at, rows_added AS last_rows
     FROM spam_imports ORDER BY source, created_at DESC`,
  );
  return rows;
}

/** Per carrier-block source (`carrier_imports.source`): how many imports, the latest one's time and the blocks it stored. */
export async function carrierImportSummary(sql: Sql): Promise<ImportSummary[]> {
  const { rows } = await sql.query<ImportSummary>(
    `SELECT DISTINCT ON (source) source, count(*) OVER (PARTITION BY source)::int AS imports, created_at AS last_import_at, blocks_stored AS last_rows
     FROM carrier_imports ORDER BY source, created_at DESC`,
  );
  return rows;
}

export type LiveCheckSetting = { check_code: CheckCode; live_price_micros: bigint | null; accounts_enabled: number; accounts_disabled: number };

/** Per check: its list price for live keys (null when no live price row exists) and how many accounts switched it on or off. */
export async function liveCheckSettings(sql: Sql): Promise<LiveCheckSetting[]> {
  const { rows } = await sql.query<LiveCheckSetting>(
    `SELECT c.check_code, p.unit_price_micros AS live_price_micros,
            (SELECT count(*)::int FROM account_check_settings s WHERE s.check_code = c.check_code AND s.enabled) AS accounts_enabled,
            (SELECT count(*)::int FROM account_check_settings s WHERE s.check_code = c.check_code AND s.enabled = false) AS accounts_disabled
     FROM (SELECT DISTINCT check_code FROM check_prices) c
     LEFT JOIN check_prices p ON p.check_code = c.check_code AND p.mode = 'live'`,
  );
  return rows;
}
