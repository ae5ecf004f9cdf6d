import { ApiError } from "@svc/contract";
import { accountTodayOfKey, usageBetween, usageToday, type AccountToday } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { nextUtcMidnight, utcDay } from "../time";
import { presentAccount, presentLimits, usageFigures, type Usage } from "./present";

/** The account with today's live counters (zero when they belong to an earlier day). */
async function loadAccount(deps: Pick<Deps, "store">, caller: Caller, day: string): Promise<AccountToday> {
  const account = await accountTodayOfKey(deps.store.pool, caller.keyId, day);
  if (!account) throw new ApiError("unauthorized");
  return account;
}

/** GET /v1/account: balance, reserved amount and today's usage (UTC) for the key's mode. */
export function getAccountRoute(deps: Pick<Deps, "store" | "now">): RouteHandler {
  return defineRoute("getAccount")(async ({ caller }) => {
    const day = utcDay(deps.now());
    const a = await loadAccount(deps, caller, day);
    const today = await usageToday(deps.store.pool, caller.accountId, caller.livemode, day);
    return { status: 200, body: presentAccount(a, caller, day, today) };
  });
}

/** GET /v1/limits: the request rate, request sizes and the caps that apply to this key. */
export function getLimitsRoute(deps: Pick<Deps, "store" | "now">): RouteHandler {
  return defineRoute("getLimits")(async ({ caller }) => {
    const now = deps.now();
    const day = utcDay(now);
    const a = await loadAccount(deps, caller, day);
    const resetsAt = nextUtcMidnight(now).toISOString();
    return { status: 200, body: presentLimits(a, caller, resetsAt) };
  });
}

const DAY_MS = 86_400_000;
const toDate = (day: string) => new Date(`${day}T00:00:00Z`);

/** How usage is grouped: the schema allows these two (`group_by`, default `day`). */
type Grouping = "day" | "check";

/** GET /v1/usage?from&to&group_by: checks, conclusive, cached, billed units and cost for the key's mode. */
export function getUsageRoute(deps: Pick<Deps, "reads" | "store" | "now">): RouteHandler {
  return defineRoute("getUsage")(async ({ caller, query }) => {
    const from = toDate(query.from);
    const to = toDate(query.to);
    if (to < from) throw new ApiError("invalid_request", { param: "to", message: "to must not be before from." });
    const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
    if (days > 366) throw new ApiError("invalid_request", { param: "to", message: "The range must not exceed 366 days." });
    const groupBy = (query.group_by ?? "day") as Grouping;
    const today = toDate(utcDay(deps.now()));
    // Lookups stay readable for retention_days × 24 h, so the day they were made
    // retention_days days ago still has some: it counts.
    const notBefore = utcDay(new Date(today.getTime() - caller.retentionDays * DAY_MS));
    if (query.from < "1970-01-01") throw new ApiError("invalid_request", { param: "from", message: "from must be a date from 1970 on." });
    // Usage tolerates the replica's lag (at most DATABASE_REPLICA_MAX_LAG_MS): see docs/architecture.md, "Read replica".
    const usage = { accountId: caller.accountId, livemode: caller.livemode, from: query.from, to: query.to, notBefore, groupBy };
    const rows = (await deps.reads.read("usage", (sql) => usageBetween(sql, usage), () => true))?.value ?? (await usageBetween(deps.store.pool, usage));
    const zero = { checks: 0, conclusive: 0, cached: 0, billed_units: 0, cost_micros: 0n };
    let data: Usage["data"];
    if (groupBy === "day") {
      const byDay = new Map(rows.map((r) => [r.key, r]));
      data = Array.from({ length: days }, (_, i) => {
        const day = utcDay(new Date(from.getTime() + i * DAY_MS));
        return { day, ...usageFigures(byDay.get(day) ?? zero) };
      });
    } else {
      data = rows.map((r) => ({ service: r.key, ...usageFigures(r) }));
    }
    const totals = rows.reduce(
      (t, r) => ({ checks: t.checks + r.checks, conclusive: t.conclusive + r.conclusive, cached: t.cached + r.cached, billed_units: t.billed_units + r.billed_units, cost_micros: t.cost_micros + r.cost_micros }),
      zero,
    );
    return { status: 200, body: { object: "usage", livemode: caller.livemode, from: query.from, to: query.to, group_by: groupBy, data, totals: usageFigures(totals) } };
  });
}
