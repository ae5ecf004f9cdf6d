import { money, parseAmount } from "@svc/domain";
import { getAccount, updateAccountSettings, type AccountSettingsChange } from "@svc/store";
import { CliError, parseFlags, required, type Flags } from "../args";
import type { CliContext } from "../context";

const NONE = "none";

function amountOrNone(flags: Flags, name: string): bigint | null | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  if (v === NONE) return null;
  const amount = parseAmount(v);
  if (amount === null) throw new CliError(`--${name} must be an amount in USD (e.g. 50) or "none"`);
  return amount;
}

function intOrNone(flags: Flags, name: string, min: number, max: number, allowNone: boolean): number | null | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  if (v === NONE && allowNone) return null;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new CliError(`--${name} must be a whole number from ${min} to ${max}${allowNone ? ' or "none"' : ""}`);
  return Number(v);
}

function onOff(flags: Flags, name: string): boolean | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  if (v !== "on" && v !== "off") throw new CliError(`--${name} must be on or off`);
  return v === "on";
}

/**
 * account set --account ID [--daily-identifiers-cap N|none] [--daily-spend-cap X|none]
 * [--low-balance-threshold X|none] [--retention-days N] [--realtime on|off] [--require-allowlist on|off]
 */
export async function accountSet(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const flags = parseFlags(args, ["account", "daily-identifiers-cap", "daily-spend-cap", "low-balance-threshold", "retention-days", "realtime", "require-allowlist"]);
  const accountId = required(flags, "account");
  const change: AccountSettingsChange = {
    dailyIdentifiersCap: intOrNone(flags, "daily-identifiers-cap", 0, 100_000_000, true),
    dailySpendCapMicros: amountOrNone(flags, "daily-spend-cap"),
    lowBalanceThresholdMicros: amountOrNone(flags, "low-balance-threshold"),
    retentionDays: intOrNone(flags, "retention-days", 1, 3650, false) ?? undefined,
    realtimeEnabled: onOff(flags, "realtime"),
    requireIpAllowlist: onOff(flags, "require-allowlist"),
  };
  if (Object.values(change).every((v) => v === undefined)) throw new CliError("nothing to change: give at least one setting");
  if (!(await getAccount(ctx.store.pool, accountId))) throw new CliError(`no account with id "${accountId}"`);
  // A new low-balance threshold re-arms balance.low (the store clears its notice).
  const a = await updateAccountSettings(ctx.store.pool, accountId, change);
  if (!a) throw new CliError(`no account with id "${accountId}"`);
  return {
    object: "account",
    id: a.id,
    daily_identifiers_cap: a.daily_identifiers_cap,
    daily_spend_cap: a.daily_spend_cap_micros === null ? null : money(a.daily_spend_cap_micros),
    low_balance_threshold: a.low_balance_threshold_micros === null ? null : money(a.low_balance_threshold_micros),
    retention_days: a.retention_days,
    realtime_enabled: a.realtime_enabled,
    require_ip_allowlist: a.require_ip_allowlist,
  };
}
