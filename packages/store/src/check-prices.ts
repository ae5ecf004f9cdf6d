import type { CheckCode } from "@svc/domain";
import type { Sql } from "./db";

/**
 * Sets the list price per conclusive answer of one check for everyone, in both
 * modes that are charged (live and agent keys); the test price is never changed here.
 * (Reads of `check_prices`, with each account's overrides, are `checkOffers` in prices.ts.)
 */
export async function setLivePrice(sql: Sql, checkCode: CheckCode, unitPriceMicros: bigint): Promise<void> {
  await sql.query(`UPDATE check_prices SET unit_price_micros = $2 WHERE check_code = $1 AND mode IN ('live', 'agent')`, [checkCode, unitPriceMicros.toString()]);
}
