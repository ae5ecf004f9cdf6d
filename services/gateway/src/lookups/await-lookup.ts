import { ApiError } from "@svc/contract";
import { completeTestLookup, notifyDispatcher } from "@svc/flows";
import { getLookup, type LookupRecord, type StoredRow } from "@svc/store";
import { publishCompletion } from "@svc/queues";
import type { Caller } from "../caller";
import type { Deps } from "../deps";

/** What reading (and waiting for) a lookup uses; completing a due test lookup publishes and notifies too. */
export type AwaitLookupDeps = Pick<Deps, "reads" | "store" | "waiter" | "redis" | "fleet" | "producer" | "logger" | "now">;

export type LoadedLookup = { lookup: LookupRecord; rows: StoredRow[] };

/**
 * Completes a due pending test lookup on the spot (idempotent with the
 * check-worker doing the same), then announces it so other replicas' waiters wake.
 */
async function completeIfDue(deps: AwaitLookupDeps, lookup: LookupRecord): Promise<boolean> {
  if (lookup.livemode || lookup.status !== "pending" || !lookup.completes_at || lookup.completes_at > deps.now()) return false;
  const done = await completeTestLookup(deps.store, lookup.id, deps.now());
  if (done.completed) {
    await publishCompletion(deps.redis, deps.fleet, lookup.id).catch(() => undefined);
    await notifyDispatcher(deps, [done.eventId]);
  }
  return true;
}

/**
 * Reads a lookup, holding up to `waitMs` while it is pending. Sleeps on a Redis
 * completion notice (or a test lookup's known completion time), never in a
 * polling loop; re-reads Postgres after each wake-up.
 *
 * `replicaFirst` (GET /v1/lookups/{id}): the first read asks the read replica, and
 * its answer is taken only when it shows the lookup completed — a completed lookup
 * never changes, so a replica that has it completed has it exactly as the primary
 * does. Not found or pending there may only mean the replica is behind (the lookup
 * was just created, or just completed): the primary is read. Re-reads after a
 * wake-up always go to the primary: the notice says the lookup just changed, which
 * the replica has likely not replayed yet.
 */
export async function awaitLookup(deps: AwaitLookupDeps, caller: Caller, id: string, waitMs: number, signal?: AbortSignal, options: { replicaFirst?: boolean } = {}): Promise<LoadedLookup> {
  const deadline = Date.now() + waitMs;
  const scope = { accountId: caller.accountId, livemode: caller.livemode };
  if (options.replicaFirst) {
    const completed = await deps.reads.read("lookup", (sql) => getLookup(sql, id, scope, deps.now()), (found) => found?.lookup.status === "completed");
    if (completed?.value) return completed.value;
  }
  for (;;) {
    const found = await getLookup(deps.store.pool, id, scope, deps.now());
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
