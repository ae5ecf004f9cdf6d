import { ApiError, LIMITS } from "@svc/contract";
import { money } from "@svc/domain";
import { accountTodayOfKey, usageBetween, usageToday, type AccountToday } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import type { Handler } from "../http/routes";
import { nextUtcMidnight, utcDay } from "../time";

/** The account with today's live counters (zero when they belong to an earlier day). */
async function loadAccount(deps: Pick<Deps, "store">, caller: Caller, day: string): Promise<AccountToday> {
  const account = await accountTodayOfKey(deps.store.pool, caller.keyId, day);
  if (!account) throw new ApiError("unauthorized");
  return account;
}

/** GET /v1/account: balance, reserved amount and today's usage (UTC) for the key's mode. */
export function getAccountHandler(deps: Pick<Deps, "store" | "now">): Handler {
  return async ({ caller }) => {
    if (!caller) throw new ApiError("unauthorized");
    const day = utcDay(deps.now());
    const a = await loadAccount(deps, caller, day);
    const today = await usageToday(deps.store.pool, caller.accountId, caller.livemode, day);
    return {
      status: 200,
      body: {
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
      },
    };
  };
}

/** GET /v1/limits: the request rate, request sizes and the caps that apply to this key. */
export function getLimitsHandler(deps: Pick<Deps, "store" | "now">): Handler {
  return async ({ caller }) => {
    if (!caller) throw new ApiError("unauthorized");
    const now = deps.now();
    const day = utcDay(now);
    const a = await loadAccount(deps, caller, day);
    const resetsAt = nextUtcMidnight(now).toISOString();
    return {
      status: 200,
      body: {
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
      },
    };
  };
}

const DAY_MS = 86_400_000;
const toDate = (day: string) => new Date(`${day}T00:00:00Z`);

/** GET /v1/usage?from&to&group_by: checks, conclusive, cached, billed units and cost for the key's mode. */
export function getUsageHandler(deps: Pick<Deps, "reads" | "store" | "now">): Handler {
  return async ({ caller, query }: { caller: Caller | undefined; query: { from: string; to: string; group_by?: "day" | "check" } }) => {
    if (!caller) throw new ApiError("unauthorized");
    const from = toDate(query.from);
    const to = toDate(query.to);
    if (to < from) throw new ApiError("invalid_request", { param: "to", message: "to must not be before from." });
    const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
    if (days > 366) throw new ApiError("invalid_request", { param: "to", message: "The range must not exceed 366 days." });
    const groupBy = query.group_by ?? "day";
    const today = toDate(utcDay(deps.now()));
    // Lookups stay readable for retention_days × 24 h, so the day they were made
    // retention_days days ago still has some: it counts.
    const notBefore = utcDay(new Date(today.getTime() - caller.retentionDays * DAY_MS));
    if (query.from < "1970-01-01") throw new ApiError("invalid_request", { param: "from", message: "from must be a date from 1970 on." });
    // Usage tolerates the replica's lag (at most DATABASE_REPLICA_MAX_LAG_MS): see docs/architecture.md, "Read replica".
    const usage = { accountId: caller.accountId, livemode: caller.livemode, from: query.from, to: query.to, notBefore, groupBy };
    const rows = (await deps.reads.read("usage", (sql) => usageBetween(sql, usage), () => true))?.value ?? (await usageBetween(deps.store.pool, usage));
    const figures = (r: { checks: number; conclusive: number; cached: number; billed_units: number; cost_micros: bigint }) => ({
      checks: r.checks,
      conclusive: r.conclusive,
      cached: r.cached,
      billed_units: r.billed_units,
      cost: money(r.cost_micros),
    });
    const zero = { checks: 0, conclusive: 0, cached: 0, billed_units: 0, cost_micros: 0n };
    let data: Array<Record<string, unknown>>;
    if (groupBy === "day") {
      const byDay = new Map(rows.map((r) => [r.key, r]));
      data = Array.from({ length: days }, (_, i) => {
        const day = utcDay(new Date(from.getTime() + i * DAY_MS));
        return { day, ...figures(byDay.get(day) ?? zero) };
      });
    } else {
      data = rows.map((r) => ({ service: r.key, ...figures(r) }));
    }
    const totals = rows.reduce(
      (t, r) => ({ checks: t.checks + r.checks, conclusive: t.conclusive + r.conclusive, cached: t.cached + r.cached, billed_units: t.billed_units + r.billed_units, cost_micros: t.cost_micros + r.cost_micros }),
      zero,
    );
    return { status: 200, body: { object: "usage", livemode: caller.livemode, from: query.from, to: query.to, group_by: groupBy, data, totals: figures(totals) } };
  };
}
