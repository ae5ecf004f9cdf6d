import type { CheckCode } from "@svc/domain";
import type { Sql } from "./db";

export type CheckOffer = { checkCode: CheckCode; livePriceMicros: bigint; testPriceMicros: bigint; enabledOverride: boolean | null };

/**
 * Prices by mode for every check, with the account's overrides applied (live and
 * agent keys pay the live price; test mode is free), and the account's switches.
 */
export async function checkOffers(sql: Sql, accountId: string | null): Promise<Map<CheckCode, CheckOffer>> {
  const { rows } = await sql.query<{ check_code: CheckCode; live: bigint; test: bigint; enabled: boolean | null }>(
    `SELECT p.check_code,
            COALESCE(s.live_unit_price_micros, p.unit_price_micros) AS live,
            COALESCE(t.unit_price_micros, 0::bigint) AS test,
            s.enabled
     FROM check_prices p
     LEFT JOIN check_prices t ON t.check_code = p.check_code AND t.mode = 'test'
     LEFT JOIN account_check_settings s ON s.check_code = p.check_code AND s.account_id = $1
     WHERE p.mode = 'live'`,
    [accountId],
  );
  return new Map(rows.map((r) => [r.check_code, { checkCode: r.check_code, livePriceMicros: r.live, testPriceMicros: r.test, enabledOverride: r.enabled }]));
}

/** Switches a check on or off for one account, or sets its live price override. */
export async function setAccountCheck(
  sql: Sql,
  s: { accountId: string; checkCode: CheckCode; enabled?: boolean | null; livePriceMicros?: bigint | null },
): Promise<void> {
  await sql.query(
    `INSERT INTO account_check_settings (account_id, check_code, enabled, live_unit_price_micros) VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id, check_code) DO UPDATE SET
       enabled = CASE WHEN $5 THEN EXCLUDED.enabled ELSE account_check_settings.enabled END,
       live_unit_price_micros = CASE WHEN $6 THEN EXCLUDED.live_unit_price_micros ELSE account_check_settings.live_unit_price_micros END`,
    [s.accountId, s.checkCode, s.enabled ?? null, s.livePriceMicros?.toString() ?? null, s.enabled !== undefined, s.livePriceMicros !== undefined],
  );
}
