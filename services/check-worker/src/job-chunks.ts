import { countSettlements, notifyDispatcher, requestSettlement } from "@svc/flows";
import { failureBackoffMs, LeaseLostError, type HeldLease, type WorkerContext } from "@svc/service-runner";
import { JOBS, publishCompletion } from "@svc/queues";
import {
  abandonCancelledChunk,
  chunkRows,
  claimChunk,
  completeChunk,
  failJob,
  finishCancelledJob,
  jobById,
  jobReservationId,
  markJobProgressAnnounced,
  recordEvent,
  releaseChunkLease,
  renewChunkLease,
  withTransaction,
  type ChunkClaim,
  type JobRecord,
  type Settled,
} from "@svc/store";
import { answerRows, cacheFreshAnswers } from "./answer-rows";
import { jobEventData } from "./job-events";
import { claimLeased, type WorkDeps } from "./leased-work";

/** Claims of one chunk after which a failure that would be retried fails the job instead. */
const MAX_CHUNK_ATTEMPTS = JOBS["job.chunk"].attempts;

/**
 * Processes one chunk of a live job: claim it (a short lease, renewed while this
 * attempt runs), answer its pending checks through the same sources as lookups,
 * write the answers and the progress in one transaction — only while the lease is
 * still this attempt's, so exactly once even if the message arrives twice or the
 * chunk was taken over — then hand the chunk's rows to the billing-ledger. The
 * last chunk completes the job and settles its money in that same transaction, so
 * `completed` (read, waited for, or announced by job.completed) always comes with
 * the final cost. An attempt whose lease is lost stops and writes nothing; one that
 * fails gives the chunk back for its retry.
 */
export async function runJobChunk(ctx: WorkerContext, deps: WorkDeps, jobId: string, chunkNo: number): Promise<void> {
  const held = await claimLeased(
    ctx,
    deps,
    { jobId, chunkNo },
    () => claimChunk(ctx.store.pool, jobId, chunkNo, ctx.now(), deps.lease.leaseMs),
    (renewal) => renewChunkLease(ctx.store.pool, jobId, chunkNo, renewal),
  );
  if (!held) return; // done, cancelled, the job will not run it, or another attempt holds it
  const { claimed, lease } = held;
  let done: Awaited<ReturnType<typeof processChunk>>;
  try {
    done = await processChunk(ctx, deps, jobId, chunkNo, claimed, lease);
  } catch (err) {
    const stillHeld = lease.held;
    lease.stop();
    // Lost: another attempt has the chunk (or will, when the lease runs out); this one
    // is over. If the chunk is still under this attempt's token (it gave up because
    // no renewal got through), it is given back for whenever the database answers.
    if (err instanceof LeaseLostError || !stillHeld) {
      void releaseChunkLease(ctx.store.pool, jobId, chunkNo, claimed.attempts, ctx.now()).catch(() => undefined);
      return;
    }
    // Processing cannot go on — an error that no retry will fix, or a transient one
    // that kept coming back: the job fails (and says so) instead of hanging.
    if (!isTransient(err) || claimed.attempts >= MAX_CHUNK_ATTEMPTS) {
      ctx.logger.error({ err, jobId, chunkNo, attempt: claimed.attempts }, "job chunk cannot be processed");
      // A cancelled job cannot fail; its chunk ends cancelled instead, so the job still ends.
      const abandoned = await withTransaction(ctx.store.pool, (client) => abandonCancelledChunk(client, jobId, chunkNo, ctx.now(), claimed.attempts));
      if (abandoned) {
        countSettlements(abandoned.settlements);
        await announceJobEnd(ctx, jobId, abandoned.eventIds);
      } else await failJobWithEvent(ctx, jobId, "processing_failed", "A part of the job could not be processed.");
      return;
    }
    // Give the chunk back after its back-off: the retry (or, if its message is lost
    // with Redis, the reconciler) takes it over then, not when the lease runs out.
    const until = new Date(ctx.now().getTime() + failureBackoffMs(claimed.attempts));
    await releaseChunkLease(ctx.store.pool, jobId, chunkNo, claimed.attempts, until).catch(() => undefined);
    throw err;
  }
  lease.stop();
  if (!done) return;
  // The chunk is committed: what follows only announces it. A failure here (Redis
  // briefly away) must not fail the job; the sweeps deliver what was not sent.
  const { notices, fresh } = done;
  await cacheFreshAnswers(ctx, fresh);
  try {
    await notifyDispatcher(ctx, notices.eventIds);
    // The chunk that finished the job settled all of it already.
    if (notices.reservationId && !notices.finished) {
      await requestSettlement(ctx.producer, { reservationId: notices.reservationId, chunk: { chunkNo, firstRow: claimed.first_row, lastRow: claimed.last_row } });
    }
    if (notices.finished) await publishCompletion(ctx.redis, ctx.fleet, jobId);
  } catch (err) {
    ctx.logger.warn({ err, jobId, chunkNo }, "chunk completed; its notices were not sent, the sweeps will settle and announce it");
  }
}

/** What a committed chunk still has to announce. */
type ChunkNotices = { finished: boolean; eventIds: string[]; reservationId: string | null; settled: Settled };

/**
 * Answers and commits one claimed chunk while its lease is held; null when the
 * commit was refused (the chunk is no longer this attempt's: taken over, or its job
 * failed). Throws LeaseLostError as soon as the lease is lost.
 */
async function processChunk(ctx: WorkerContext, deps: WorkDeps, jobId: string, chunkNo: number, claimed: ChunkClaim, lease: HeldLease) {
  const rows = await lease.guard(chunkRows(ctx.store.pool, jobId, claimed.first_row, claimed.last_row));
  const { rows: results, fresh } = await lease.guard(answerRows({ store: ctx.store, runner: deps.runner, cacheSecret: deps.cacheSecret, now: ctx.now }, rows));
  const reservationId = await lease.guard(jobReservationId(ctx.store.pool, jobId));
  lease.assertHeld();
  const now = ctx.now();
  const notices = await withTransaction(ctx.store.pool, async (client): Promise<ChunkNotices | null> => {
    const result = await completeChunk(client, jobId, chunkNo, claimed.attempts, results, now);
    if (!result) return null;
    // The job's settlement (if this chunk finished it) happened in completeChunk, before the event.
    const eventIds: string[] = [...result.settled.eventIds];
    if (result.finished && result.job.status === "completed") eventIds.push(await jobEvent(client, result.job, "job.completed", now));
    else if (result.progressDue) {
      await markJobProgressAnnounced(client, jobId, now);
      eventIds.push(await jobEvent(client, result.job, "job.progress", now));
    }
    return { finished: result.finished, eventIds, reservationId, settled: result.settled };
  });
  if (notices) countSettlements(notices.settled.settlements);
  else ctx.logger.info({ jobId, chunkNo, attempt: claimed.attempts }, "chunk not committed: it is no longer this attempt's");
  return notices && { notices, fresh };
}

/**
 * Errors worth retrying: lost connections, timeouts, and Postgres saying "try
 * again" (connection class 08, serialization failure, deadlock, shutdown,
 * resources). Anything else (a bug, bad stored data) would fail every retry too.
 */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return /timeout|ECONN|EPIPE|socket|Connection/i.test(String((err as Error)?.message ?? ""));
  return /^(08|53|57P0)/.test(code) || ["40001", "40P01", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN"].includes(code);
}

/** Records job.completed / job.progress / job.failed for the endpoint the job named (none named: no event). */
async function jobEvent(client: import("pg").PoolClient, job: JobRecord, type: "job.completed" | "job.progress" | "job.failed", now: Date): Promise<string> {
  if (!job.webhook_endpoint_id) return "";
  return recordEvent(client, { accountId: job.account_id, livemode: job.livemode, type, endpointId: job.webhook_endpoint_id, createdAt: now, data: jobEventData(job, type) });
}

export async function failJobWithEvent(ctx: WorkerContext, jobId: string, code: string, message: string): Promise<void> {
  const now = ctx.now();
  const failed = await withTransaction(ctx.store.pool, async (client) => {
    const settled = await failJob(client, jobId, code, message, now);
    if (!settled) return null;
    const job = await jobById(client, jobId);
    return { settled, eventIds: [...settled.eventIds, job ? await jobEvent(client, job, "job.failed", now) : ""] };
  });
  if (!failed) return;
  countSettlements(failed.settled.settlements);
  ctx.logger.error({ jobId, code }, "job failed");
  await announceJobEnd(ctx, jobId, failed.eventIds);
}

/** After the COMMIT that ended (and settled) the job: wakes waiting readers and nudges the dispatcher. */
async function announceJobEnd(ctx: WorkerContext, jobId: string, eventIds: string[]): Promise<void> {
  await publishCompletion(ctx.redis, ctx.fleet, jobId);
  await notifyDispatcher(ctx, eventIds);
}

/**
 * `job.finish`: finishes (and settles) a cancelled job with nothing in flight, or
 * settles a finished job's open reservation, then wakes the request waiting for it
 * (the gateway's DELETE) and nudges the dispatcher. A repeat finds nothing to do.
 */
export async function finishJob(ctx: WorkerContext, jobId: string): Promise<void> {
  const settled = await withTransaction(ctx.store.pool, (client) => finishCancelledJob(client, jobId, ctx.now()));
  if (!settled) return;
  countSettlements(settled.settlements);
  await announceJobEnd(ctx, jobId, settled.eventIds);
}
