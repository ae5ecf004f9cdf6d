import { completeTestLookup, notifyDispatcher, type WorkerContext } from "@svc/core";
import { publishCompletion } from "@svc/queues";
import { dueTestLookups } from "@svc/store";

/** Completes one pending test lookup if due; repeats are no-ops. */
export async function completeDueTestLookup(ctx: WorkerContext, lookupId: string): Promise<void> {
  const done = await completeTestLookup(ctx.store, lookupId, ctx.now());
  if (done.completed) {
    await publishCompletion(ctx.redis, ctx.prefix, lookupId);
    await notifyDispatcher(ctx, [done.eventId]);
    ctx.logger.info({ lookupId, eventId: done.eventId }, "test lookup completed");
  }
}

/** Safety net: Postgres says which test lookups are due, whatever happened to their queue messages. */
export async function sweepDueTestLookups(ctx: WorkerContext): Promise<void> {
  for (const id of await dueTestLookups(ctx.store.pool, ctx.now())) await completeDueTestLookup(ctx, id);
}
