import type pg from "pg";
import { ApiError } from "@svc/contract";
import { notifyDispatcher } from "@svc/core";
import { maxCostMicros, money, newId, parseAmount, toUnitPrices, type CheckCode } from "@svc/domain";
import {
  bindIdempotentResource,
  capsOfKey,
  insertLookup,
  markCapReached,
  recordEvent,
  reserveAndCommit,
  reserveWithLookup,
  withTransaction,
  type IdempotencyClaimRef,
  type NewLookup,
  type ReservationRefusal,
} from "@svc/store";
import { metrics } from "@svc/telemetry";
import { offersFor } from "../cache/offers";
import type { Caller, Deps } from "../context";
import { nextUtcMidnight, secondsUntilUtcMidnight, utcDay } from "../time";
import type { Plan } from "./plan";

export type Quote = { amountMicros: bigint; unitPrices: ReturnType<typeof toUnitPrices> };

/**
 * The maximum possible cost of a planned request at the account's prices for the
 * key's mode (test mode is free), checked against `max_cost`.
 */
export async function quote(deps: Deps, caller: Caller, plan: Pick<Plan, "checks" | "counts">, maxCost: { amount: string | number } | undefined): Promise<Quote> {
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

const CAP_NAMES = { daily_identifiers_cap: "daily_identifiers", account_daily_spend_cap: "account_daily_spend", key_daily_spend_cap: "key_daily_spend" } as const;

/** Turns a refused reservation into the client's error, recording limits.cap_reached once a day per cap. */
async function refusal(deps: Deps, caller: Caller, reason: ReservationRefusal, day: string): Promise<ApiError> {
  const now = deps.now();
  if (reason === "insufficient_balance") {
    return new ApiError("insufficient_balance", { suggestion: "Top up the balance, or send fewer identifiers or checks." });
  }
  const eventId = await withTransaction(deps.store.pool, async (client) => {
    if (!(await markCapReached(client, reason, { accountId: caller.accountId, apiKeyId: caller.keyId }, day))) return null;
    const caps = await capsOfKey(client, caller.keyId);
    const limit = reason === "daily_identifiers_cap" ? String(caps?.ids ?? "") : money((reason === "key_daily_spend_cap" ? caps?.key_spend : caps?.spend) ?? 0n).amount;
    return recordEvent(client, {
      accountId: caller.accountId,
      livemode: true,
      type: "limits.cap_reached",
      endpointId: null,
      createdAt: now,
      data: {
        object: "limit",
        cap: CAP_NAMES[reason],
        limit,
        resets_at: nextUtcMidnight(now).toISOString(),
        key_hint: reason === "key_daily_spend_cap" ? (caps?.hint ?? null) : null,
      },
    });
  });
  await notifyDispatcher(deps, [eventId]);
  const retryAfterSeconds = secondsUntilUtcMidnight(now);
  if (reason === "key_daily_spend_cap") {
    return new ApiError("spend_cap_reached", { message: "This key's daily spend cap is reached; it resets at 00:00 UTC.", retryAfterSeconds });
  }
  return new ApiError("daily_cap_reached", {
    message: reason === "daily_identifiers_cap" ? "The account's daily identifiers cap is used up; it resets at 00:00 UTC." : "The account's daily spend cap is used up; it resets at 00:00 UTC.",
    retryAfterSeconds,
  });
}

/** What a reservation stores: a live lookup (as data), or anything else written by a callback. */
export type Storable = { lookup: NewLookup } | ((client: pg.PoolClient, reservationId: string) => Promise<void>);

/**
 * Stores the request and reserves the quote together, so a lookup or job exists
 * exactly when its money is held. Refusals write nothing. Under an Idempotency-Key
 * the resource is bound to the request's claim in the same transaction; a claim lost
 * to a retry (this request ran past its lock) rolls everything back, so one key never
 * holds money twice. A live lookup of an uncapped key with no claim to bind is written
 * in the reservation's own statement (one round trip instead of BEGIN, reserve,
 * insert, COMMIT); a capped key's counter is written before the account's conditions
 * are known, so it needs the transaction's rollback.
 */
export async function reserveAndStore(
  deps: Deps,
  caller: Caller,
  q: Quote,
  identifiers: number,
  target: { lookupId: string; jobId?: undefined; expiresAt: Date } | { jobId: string; lookupId?: undefined; expiresAt: Date },
  store: Storable,
  claim: IdempotencyClaimRef | undefined,
): Promise<string> {
  const day = utcDay(deps.now());
  const reservationId = newId("reservation");
  const input = {
    reservationId,
    accountId: caller.accountId,
    apiKeyId: caller.keyId,
    keyHasCap: caller.dailySpendCapMicros !== null,
    amountMicros: q.amountMicros,
    identifiers,
    day,
    unitPrices: q.unitPrices,
    ...target,
  };
  const lookup = typeof store === "function" ? undefined : store.lookup;
  const write = typeof store === "function" ? store : (client: pg.PoolClient) => insertLookup(client, store.lookup);
  const r =
    lookup && target.lookupId !== undefined && !claim && !input.keyHasCap && !lookup.usage
      ? await reserveWithLookup(deps.store.pool, deps.accountTurns, { ...input, lookupId: target.lookupId }, lookup)
      : await reserveAndCommit(deps.store.pool, deps.accountTurns, input, async (client) => {
          await write(client, reservationId);
          if (claim && !(await bindIdempotentResource(client, claim, target.lookupId ?? target.jobId))) {
            throw new ApiError("idempotency_request_in_progress", { param: "Idempotency-Key", retryAfterSeconds: 1 });
          }
        });
  metrics.reservations().inc({ mode: caller.mode, outcome: r.ok ? "reserved" : "refused" });
  if (!r.ok) throw await refusal(deps, caller, r.reason, day);
  metrics.reservedMicros().inc({ mode: caller.mode }, Number(q.amountMicros));
  return reservationId;
}
