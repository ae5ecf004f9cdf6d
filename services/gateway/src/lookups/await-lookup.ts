import { ApiError } from "@svc/contract";
import { completeTestLookup, notifyDispatcher } from "@svc/core";
import { getLookup, type LookupRecord, type StoredRow } from "@svc/store";
import { publishCompletion } from "@svc/queues";
import type { Caller, Deps } from "../context";

export type LoadedLookup = { lookup: LookupRecord; rows: StoredRow[] };

/**
 * Completes a due pending test lookup on the spot (idempotent with the
 * check-worker doing the same), then announces it so other replicas' waiters wake.
 */
async function completeIfDue(deps: Deps, lookup: LookupRecord): Promise<boolean> {
  if (lookup.livemode || lookup.status !== "pending" || !lookup.completes_at || lookup.completes_at > deps.now()) return false;
  const done = await completeTestLookup(deps.store, lookup.id, deps.now());
  if (done.completed) {
    await publishCompletion(deps.redis, deps.config.REDIS_PREFIX, lookup.id).catch(() => undefined);
    await notifyDispatcher(deps, [done.eventId]);
  }
  return true;
}

/**
 * Reads a lookup, holding up to `waitMs` while it is pending. Sleeps on a Redis
 * completion notice (or a test lookup's known completion time), never in a
 * polling loop; re-reads Postgres after each wake-up.
 */
export async function awaitLookup(deps: Deps, caller: Caller, id: string, waitMs: number, signal?: AbortSignal): Promise<LoadedLookup> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found = await getLookup(deps.store.pool, id, { accountId: caller.accountId, livemode: caller.livemode }, deps.now());
    if (!found) throw new ApiError("not_found", { message: "No such lookup." });
    if (found.lookup.status === "completed") return found;
    if (await completeIfDue(deps, found.lookup)) continue;
    const remaining = deadline - Date.now();
    if (remaining <= 0 || signal?.aborted || deps.waiter.isClosed) return found;
    const untilDue = found.lookup.completes_at ? Math.max(1, found.lookup.completes_at.getTime() - deps.now().getTime()) : remaining;
    await deps.waiter.wait(id, Math.min(remaining, untilDue), signal);
    if (signal?.aborted) return found;
  }
}
