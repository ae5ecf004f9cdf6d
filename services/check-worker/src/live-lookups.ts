import { lookupCompletedData, notifyDispatcher, type WorkerContext } from "@svc/core";
import type { CheckResult } from "@svc/domain";
import { publishCompletion } from "@svc/queues";
import type { CheckRunner } from "@svc/sources";
import { completeLookup, pendingLookupRows, recordEvent, withTransaction } from "@svc/store";
import { answerRows, cacheFreshAnswers } from "./answer-rows";

/**
 * Answers every pending check of a live lookup, completes it in one transaction
 * and hands its reservation to the billing-ledger. Re-running after a crash asks
 * the sources again but completes, and so bills, only once.
 */
export async function runLiveLookup(ctx: WorkerContext, runner: CheckRunner, cacheSecret: string, lookupId: string): Promise<void> {
  const { rows: found } = await ctx.store.pool.query<{ status: string }>(`SELECT status FROM lookups WHERE id = $1 AND livemode = true`, [lookupId]);
  if (found[0]?.status !== "pending") return;
  const started = ctx.now();
  const { rows: updated, fresh } = await answerRows({ store: ctx.store, runner, cacheSecret, now: ctx.now }, await pendingLookupRows(ctx.store.pool, lookupId));
  const now = ctx.now();

  const outcome = await withTransaction(ctx.store.pool, async (client) => {
    const done = await completeLookup(client, lookupId, updated, now);
    if (!done) return null;
    let eventId: string | null = null;
    if (done.announced_pending && done.webhook_endpoint_id) {
      const { rows: all } = await client.query<{ checks: CheckResult[] }>(`SELECT checks FROM result_rows WHERE lookup_id = $1`, [lookupId]);
      eventId = await recordEvent(client, {
        accountId: done.account_id,
        livemode: true,
        type: "lookup.completed",
        endpointId: done.webhook_endpoint_id,
        createdAt: now,
        data: lookupCompletedData(lookupId, true, all),
      });
    }
    const rsv = await client.query<{ id: string }>(`SELECT id FROM reservations WHERE lookup_id = $1`, [lookupId]);
    return { reservationId: rsv.rows[0]?.id ?? null, eventId };
  });
  if (!outcome) return;
  await cacheFreshAnswers(ctx, fresh);
  await publishCompletion(ctx.redis, ctx.prefix, lookupId);
  await notifyDispatcher(ctx, [outcome.eventId]);
  if (outcome.reservationId) {
    await ctx.producer.enqueue("settle.reservation", { reservationId: outcome.reservationId }, { jobId: `settle-${outcome.reservationId}` });
  }
  ctx.logger.info({ lookupId, ms: now.getTime() - started.getTime(), eventId: outcome.eventId }, "live lookup completed");
}
