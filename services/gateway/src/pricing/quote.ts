import { ApiError } from "@svc/contract";
import { maxCostMicros, money, parseAmount, toUnitPrices, type CheckCode } from "@svc/domain";
import type { Caller } from "../caller";
import { offersFor, type OfferDeps } from "../planning/offers";
import type { Plan } from "../planning/plan";

export type Quote = { amountMicros: bigint; unitPrices: ReturnType<typeof toUnitPrices> };

/**
 * The maximum possible cost of a planned request at the account's prices for the
 * key's mode (test mode is free), checked against `max_cost`.
 */
export async function quote(deps: OfferDeps, caller: Pick<Caller, "accountId" | "livemode">, plan: Pick<Plan, "checks" | "counts">, maxCost: { amount: string | number } | undefined): Promise<Quote> {
  const offers = await offersFor(deps, caller.accountId);
  const prices = new Map(plan.checks.map((c) => [c, (caller.livemode ? offers.get(c)?.livePriceMicros : offers.get(c)?.testPriceMicros) ?? 0n] as [CheckCode, bigint]));
  const amountMicros = maxCostMicros(plan.counts, plan.checks, prices);
  if (maxCost !== undefined) {
    const limit = parseAmount(maxCost.amount);
    if (limit === null) {
      throw new ApiError("invalid_request", { param: "max_cost.amount", message: "max_cost.amount must be a non-negative decimal amount in USD with at most 6 decimals." });
    }
    if (amountMicros > limit) {
      throw new ApiError("cost_limit_exceeded", {
        param: "max_cost.amount",
        message: `The maximum possible cost (${money(amountMicros).amount} USD) is higher than max_cost.`,
      });
    }
  }
  return { amountMicros, unitPrices: toUnitPrices(prices, plan.checks) };
}
