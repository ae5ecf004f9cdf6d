import { LIMITS, type AccountSchema, type LimitsSchema, type Static, type UsageSchema } from "@svc/contract";
import { money } from "@svc/domain";
import type { AccountToday, UsageFigures } from "@svc/store";
import type { Caller } from "../caller";

export type Account = Static<typeof AccountSchema>;
export type Limits = Static<typeof LimitsSchema>;
export type Usage = Static<typeof UsageSchema>;

/** The account for the key's mode on `day`: live counters for live and agent keys, the usage rows (`today`) for test keys. */
export function presentAccount(a: AccountToday, caller: Pick<Caller, "livemode">, day: string, today: { identifiers: number; checks: number; conclusive: number }): Account {
  return {
    object: "account",
    id: a.id,
    name: a.name,
    livemode: caller.livemode,
    balance: money(a.balance_micros),
    reserved: money(a.reserved_micros),
    available: money(a.balance_micros - a.reserved_micros),
    low_balance_threshold: a.low_balance_threshold_micros === null ? null : money(a.low_balance_threshold_micros),
    retention_days: a.retention_days,
    today: {
      date: day,
      identifiers: caller.livemode ? a.day_identifiers : today.identifiers,
      checks: today.checks,
      conclusive: today.conclusive,
      spend: money(caller.livemode ? a.day_spend_micros : 0n),
    },
  };
}

/** The request rate, request sizes and the caps that apply to this key; caps reset at `resetsAt`. */
export function presentLimits(a: AccountToday, caller: Pick<Caller, "livemode" | "isSandbox">, resetsAt: string): Limits {
  return {
    object: "limits",
    request_rate: caller.isSandbox
      ? { per_minute: LIMITS.sandboxRequestsPerMinute, per_day: LIMITS.sandboxRequestsPerDay, scope: "ip" }
      : { per_second: LIMITS.requestsPerSecond, burst: LIMITS.burst, scope: "key" },
    request_sizes: {
      lookup_identifiers: LIMITS.lookupIdentifiers,
      job_identifiers: caller.isSandbox ? LIMITS.sandboxJobIdentifiers : LIMITS.jobIdentifiers,
      checks_per_request: LIMITS.checksPerRequest,
      lookup_identifier_checks: LIMITS.lookupIdentifierChecks,
      job_identifier_checks: LIMITS.jobIdentifierChecks,
      body_bytes: LIMITS.bodyBytes,
      job_body_bytes: LIMITS.jobBodyBytes,
    },
    // Caps apply to live and agent keys; a test key is never held by them.
    daily_identifiers_cap: !caller.livemode || a.daily_identifiers_cap === null ? null : { limit: a.daily_identifiers_cap, used: a.day_identifiers, resets_at: resetsAt },
    account_daily_spend_cap: !caller.livemode || a.daily_spend_cap_micros === null ? null : { limit: money(a.daily_spend_cap_micros), used: money(a.day_spend_micros), resets_at: resetsAt },
    key_daily_spend_cap: !caller.livemode || a.key_cap === null ? null : { limit: money(a.key_cap), used: money(a.key_day_spend), resets_at: resetsAt },
  };
}

/** One row of usage figures (a day, a check, or the totals) as the API shows them. */
export function usageFigures(r: UsageFigures): Usage["totals"] {
  return {
    checks: r.checks,
    conclusive: r.conclusive,
    cached: r.cached,
    billed_units: r.billed_units,
    cost: money(r.cost_micros),
  };
}
