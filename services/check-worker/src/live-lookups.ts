import { lookupCompletedData, notifyDispatcher, requestSettlement } from "@svc/flows";
import { failureBackoffMs, LeaseLostError, type WorkerContext } from "@svc/service-runner";
import { lookupAnswerText, publishCompletion } from "@svc/queues";
import {
  claimLiveLookupWithRows,
  completeLiveLookupAlone,
  completeLookup,
  lookupReservationId,
  lookupRowChecks,
  recordEvent,
  releaseLookupLease,
  renewLookupLease,
  withTransaction,
} from "@svc/store";
import { answerRows, cacheFreshAnswers } from "./answer-rows";
import { claimLeased, type WorkDeps } from "./leased-work";

/**
 * Answers every pending check of a live lookup, completes it in one transaction
 * and hands its reservation to the billing-ledger. The run holds the lookup with a
 * short lease renewed while it works, and completes it only while it still holds
 * it: a run whose lease is lost stops and writes nothing, and a re-run after a
 * crash asks the sources again but completes, and so bills, only once.
 */
export async function runLiveLookup(ctx: WorkerContext, deps: WorkDeps, lookupId: string): Promise<void> {
  const held = await claimLeased(
    ctx,
    deps,
    { lookupId },
    // The claim reads the rows to answer in the same round trip.
    () => claimLiveLookupWithRows(ctx.store.pool, lookupId, ctx.now(), deps.lease.leaseMs),
    (renewal) => renewLookupLease(ctx.store.pool, lookupId, renewal),
  );
  if (!held) return; // completed, not live, or another run holds it
  const { lease } = held;
  const token = held.claimed.attempts;
  const started = ctx.now();
  // `answer`: the notice's answer, only where the one statement completed it with rows known exactly as stored.
  let outcome: { reservationId: string | null; eventId: string | null; answer?: string } | null;
  let fresh: Awaited<ReturnType<typeof answerRows>>["fresh"];
  try {
    const answered = await lease.guard(answerRows({ store: ctx.store, runner: deps.runner, cacheSecret: deps.cacheSecret, now: ctx.now }, held.claimed.rows));
    fresh = answered.fresh;
    lease.assertHeld();
    const now = ctx.now();
    // One statement when no event is due (the usual case); the transaction below otherwise.
    const alone = await completeLiveLookupAlone(ctx.store.pool, lookupId, answered.rows, now, token);
    outcome = alone
      ? { reservationId: alone.reservationId, eventId: null, ...(alone.rows ? { answer: lookupAnswerText(now, alone.rows) } : {}) }
      : await withTransaction(ctx.store.pool, async (client) => {
          const done = await completeLookup(client, lookupId, answered.rows, now, token);
          if (!done) return null;
          let eventId: string | null = null;
          if (done.announced_pending && done.webhook_endpoint_id) {
            const all = await lookupRowChecks(client, lookupId);
            eventId = await recordEvent(client, {
              accountId: done.account_id,
              livemode: true,
              type: "lookup.completed",
              endpointId: done.webhook_endpoint_id,
              createdAt: now,
              data: lookupCompletedData(lookupId, true, all),
            });
          }
          return { reservationId: await lookupReservationId(client, lookupId), eventId };
        });
  } catch (err) {
    const stillHeld = lease.held;
    lease.stop();
    // Lost: another run has it, or will when the lease runs out; still under this
    // run's token (no renewal got through), it is given back for whenever the database answers.
    if (err instanceof LeaseLostError || !stillHeld) {
      void releaseLookupLease(ctx.store.pool, lookupId, token, ctx.now()).catch(() => undefined);
      return;
    }
    // Give the lookup back after its back-off: the retry (or the reconciler, if the
    // message went with Redis) runs it then, not when the lease runs out.
    const until = new Date(ctx.now().getTime() + failureBackoffMs(token));
    await releaseLookupLease(ctx.store.pool, lookupId, token, until).catch(() => undefined);
    throw err;
  }
  lease.stop();
  if (!outcome) {
    ctx.logger.info({ lookupId, attempt: token }, "lookup not completed by this run: it is no longer this run's");
    return;
  }
  // The waiting request is woken first, with the answer when there is one (it then
  // replies without reading the lookup back). Caching, the dispatcher's notice and
  // the settlement hand-off (all only after the commit, as before) start once Redis
  // has taken the notice: started beside it, the hand-off's script could run in Redis
  // before the notice reached the gateway, and the cache write and the settlement it
  // wakes competed with the gateway's wake-up for this machine's cores. A notice that
  // fails costs the waiter latency only (it re-reads at its deadline); any failure
  // still fails the attempt once the others have run.
  const { reservationId, eventId, answer } = outcome;
  const notice = await publishCompletion(ctx.redis, ctx.fleet, lookupId, answer).then(
    () => null,
    (err: unknown) => ({ err }),
  );
  const rest = await Promise.allSettled([
    cacheFreshAnswers(ctx, fresh),
    notifyDispatcher(ctx, [eventId]),
    reservationId ? requestSettlement(ctx.producer, { reservationId }) : undefined,
  ]);
  if (notice) throw notice.err;
  const failed = rest.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  ctx.logger.info({ lookupId, ms: ctx.now().getTime() - started.getTime(), eventId: outcome.eventId }, "live lookup completed");
}
