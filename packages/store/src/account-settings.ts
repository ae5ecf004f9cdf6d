import type { Sql } from "./db";

/** An account's operator settings; `null` clears a cap or threshold, an absent field is left as it is. */
export type AccountSettingsChange = {
  dailyIdentifiersCap?: number | null;
  dailySpendCapMicros?: bigint | null;
  lowBalanceThresholdMicros?: bigint | null;
  retentionDays?: number;
  realtimeEnabled?: boolean;
  requireIpAllowlist?: boolean;
};

export type AccountSettingsRow = {
  id: string;
  daily_identifiers_cap: number | null;
  daily_spend_cap_micros: bigint | null;
  low_balance_threshold_micros: bigint | null;
  retention_days: number;
  realtime_enabled: boolean;
  require_ip_allowlist: boolean;
};

/** Each field's column, in the order they are set. Only these names ever reach the statement's text. */
const COLUMNS: ReadonlyArray<[keyof AccountSettingsChange, string]> = [
  ["dailyIdentifiersCap", "daily_identifiers_cap"],
  ["dailySpendCapMicros", "daily_spend_cap_micros"],
  ["lowBalanceThresholdMicros", "low_balance_threshold_micros"],
  ["retentionDays", "retention_days"],
  ["realtimeEnabled", "realtime_enabled"],
  ["requireIpAllowlist", "require_ip_allowlist"],
];

/**
 * Changes the given settings in one statement and returns them all as stored, or
 * null when there is no such account. A new low-balance threshold (or its removal)
 * re-arms `balance.low`. At least one field must be given.
 */
export async function updateAccountSettings(sql: Sql, accountId: string, change: AccountSettingsChange): Promise<AccountSettingsRow | null> {
  const given = COLUMNS.filter(([field]) => change[field] !== undefined);
  if (given.length === 0) throw new Error("updateAccountSettings: no setting given");
  const sets = given.map(([, column], i) => `${column} = $${i + 2}`);
  if (change.lowBalanceThresholdMicros !== undefined) sets.push("low_balance_notified_at = NULL");
  const values = given.map(([field]) => {
    const value = change[field];
    return typeof value === "bigint" ? value.toString() : value;
  });
  const { rows } = await sql.query<AccountSettingsRow>(
    `UPDATE accounts SET ${sets.join(", ")} WHERE id = $1
     RETURNING id, daily_identifiers_cap, daily_spend_cap_micros, low_balance_threshold_micros, retention_days, realtime_enabled, require_ip_allowlist`,
    [accountId, ...values],
  );
  return rows[0] ?? null;
}

/** Whether the account accepts live and agent keys only with an IP allowlist (false when there is no such account). */
export async function accountRequiresIpAllowlist(sql: Sql, accountId: string): Promise<boolean> {
  const { rows } = await sql.query<{ require_ip_allowlist: boolean }>(`SELECT require_ip_allowlist FROM accounts WHERE id = $1`, [accountId]);
  return rows[0]?.require_ip_allowlist ?? false;
}
