import { CHECKS, money, type CheckCode, type PreparedRow } from "@svc/domain";
import { countCachedAnswers, identifierHash } from "@svc/store";
import type { Caller, Deps } from "../context";
import type { Plan } from "../requests/plan";
import type { Quote } from "../requests/reserve";

type Counts = { total: number; valid: number; invalid: number; duplicate: number };

function count(rows: readonly PreparedRow[]): Counts {
  const c: Counts = { total: rows.length, valid: 0, invalid: 0, duplicate: 0 };
  for (const r of rows) {
    if (r.status === "invalid") c.invalid += 1;
    else if (r.status === "duplicate") c.duplicate += 1;
    else c.valid += 1;
  }
  return c;
}

/**
 * How a list is counted and what it may cost: rows by kind and status, checks,
 * answers the cache would give (free), checks that could be billed, and the
 * maximum possible cost (what a job reserves). Reads the cache; writes nothing.
 */
export async function buildEstimate(deps: Deps, caller: Caller, plan: Plan, q: Quote): Promise<Record<string, unknown>> {
  const numbers = plan.rows.filter((r) => r.kind === "number");
  const emails = plan.rows.filter((r) => r.kind === "email");
  const byCheck: Array<Record<string, unknown>> = [];
  let cachedTotal = 0;
  let billable = 0;
  const now = deps.now();
  for (const check of plan.checks) {
    const applicable = CHECKS[check].input === "number" ? numbers : emails;
    const candidates = applicable.filter((r) => r.status === "valid");
    let cached = 0;
    if (caller.livemode && candidates.length > 0) {
      const hashes = candidates.map((r) => identifierHash(deps.config.CACHE_HASH_SECRET, (r.e164 ?? r.email) as string));
      cached = await countCachedAnswers(deps.store.pool, check, hashes, now);
    }
    const unit = BigInt(q.unitPrices[check as CheckCode] ?? "0");
    cachedTotal += cached;
    billable += candidates.length - cached;
    byCheck.push({ service: check, rows: applicable.length, cached, unit_price: money(unit), max_cost: money(unit * BigInt(applicable.length)) });
  }
  return {
    object: "estimate",
    livemode: caller.livemode,
    rows: count(plan.rows),
    numbers: count(numbers),
    emails: count(emails),
    checks_total: plan.checksTotal,
    cached_answers: cachedTotal,
    billable_checks_max: caller.livemode ? billable : 0,
    max_cost: money(q.amountMicros),
    by_check: byCheck,
  };
}
