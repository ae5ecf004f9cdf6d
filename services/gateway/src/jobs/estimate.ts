import type { EstimateSchema, Static } from "@svc/contract";
import { CHECKS, money } from "@svc/domain";
import { countCachedAnswers } from "@svc/store";
import type { AcceptedIntake } from "../bulk";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import type { Plan } from "../planning/plan";
import type { Quote } from "../pricing/quote";

export type Estimate = Static<typeof EstimateSchema>;

/**
 * How a list is counted and what it may cost: rows by kind and status, checks,
 * answers the cache would give (free), checks that could be billed, and the
 * maximum possible cost (what a job reserves). Reads the cache; writes nothing.
 * The counting was done on the intake thread; here only the cache is asked.
 */
export async function buildEstimate(deps: Pick<Deps, "store" | "now">, caller: Caller, plan: Plan, intake: AcceptedIntake, q: Quote): Promise<Estimate> {
  const byCheck: Estimate["by_check"] = [];
  let cachedTotal = 0;
  let billable = 0;
  const now = deps.now();
  for (const check of plan.checks) {
    const kind = CHECKS[check].input;
    const counts = intake.counts[kind];
    const cached = caller.livemode && intake.cacheKeys ? await countCachedAnswers(deps.store.pool, check, intake.cacheKeys[kind], now) : 0;
    const unit = BigInt(q.unitPrices[check] ?? "0");
    cachedTotal += cached;
    billable += counts.valid - cached;
    byCheck.push({ service: check, rows: counts.total, cached, unit_price: money(unit), max_cost: money(unit * BigInt(counts.total)) });
  }
  return {
    object: "estimate",
    livemode: caller.livemode,
    rows: intake.counts.rows,
    numbers: intake.counts.number,
    emails: intake.counts.email,
    checks_total: plan.checksTotal,
    cached_answers: cachedTotal,
    billable_checks_max: caller.livemode ? billable : 0,
    max_cost: money(q.amountMicros),
    by_check: byCheck,
  };
}
