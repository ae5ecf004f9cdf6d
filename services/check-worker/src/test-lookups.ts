import { completeTestLookup, notifyDispatcher } from "@svc/flows";
import type { WorkerContext } from "@svc/service-runner";
import { publishCompletion } from "@svc/queues";
import { dueTestLookups } from "@svc/store";

/** Completes one pending test lookup if due; repeats are no-ops. */
export async function completeDueTestLookup(ctx: WorkerContext, lookupId: string): Promise<void> {
  const done = await completeTestLookup(ctx.store, lookupId, ctx.now());
  if (done.completed) {
    await publishCompletion(ctx.redis, ctx.fleet, lookupId);
    await notifyDispatcher(ctx, [done.eventId]);
    ctx.logger.info({ lookupId, eventId: done.eventId }, "test lookup completed");
  }
}

/** Completions one sweep runs at once, and the most one pass takes on (then the next pass goes on). */
const SWEEP_CONCURRENCY = 4;
const SWEEP_MAX = 20_000;

/**
 * Safety net: Postgres says which test lookups are due, whatever happened to their
 * queue messages. A pass keeps going while it finds full pages, so thousands of
 * lookups whose messages went with Redis complete in one pass (seconds), not at a
 * page per sweep interval.
 */
export async function sweepDueTestLookups(ctx: WorkerContext, pageSize = 100): Promise<void> {
  for (let swept = 0; swept < SWEEP_MAX; ) {
    const due = await dueTestLookups(ctx.store.pool, ctx.now(), pageSize);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(SWEEP_CONCURRENCY, due.length) }, async () => {
        while (next < due.length) await completeDueTestLookup(ctx, due[next++] as string);
      }),
    );
    swept += due.length;
    if (due.length < pageSize) return;
  }
}
