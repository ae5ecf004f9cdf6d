import type pg from "pg";
import { ApiError } from "@svc/contract";
import { notifyDispatcher } from "@svc/flows";
import { money, newId } from "@svc/domain";
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
import { metrics } from "@svc/metrics";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { nextUtcMidnight, secondsUntilUtcMidnight, utcDay } from "../time";
import type { Quote } from "./quote";

/** What a reservation uses: the database and this process's turns on account rows; the dispatcher's queue for limits.cap_reached; the clock. */
export type ReserveDeps = Pick<Deps, "store" | "accountTurns" | "producer" | "logger" | "now">;

const CAP_NAMES = { daily_identifiers_cap: "daily_identifiers", account_daily_spend_cap: "account_daily_spend", key_daily_spend_cap: "key_daily_spend" } as const;

/** Turns a refused reservation into the client's error, recording limits.cap_reached once a day per cap. */
async function refusal(deps: ReserveDeps, caller: Caller, reason: ReservationRefusal, day: string): Promise<ApiError> {
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
  deps: ReserveDeps,
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
