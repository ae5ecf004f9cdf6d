import type { Job } from "bullmq";
import { notifyDispatcher, type WorkerContext } from "@svc/core";
import { publishCompletion } from "@svc/queues";
import type { CheckRunner } from "@svc/sources";
import { abandonCancelledChunk, chunkRows, claimChunk, completeChunk, failJob, jobById, recordEvent, withTransaction, type JobRecord } from "@svc/store";
import { answerRows, cacheFreshAnswers } from "./answer-rows";
import { jobEventData } from "./job-events";

/** How long a claimed chunk may run before the reconciler assumes its worker died. */
export const CHUNK_LEASE_MS = 5 * 60_000;

/**
 * Processes one chunk of a live job: claim it, answer its pending checks through
 * the same sources as lookups, write the answers and the progress in one
 * transaction (exactly once, even if the message arrives twice), then hand the
 * chunk's rows to the billing-ledger. The last chunk completes the job.
 */
export async function runJobChunk(ctx: WorkerContext, runner: CheckRunner, cacheSecret: string, jobId: string, chunkNo: number, job?: Job): Promise<void> {
  let done: Awaited<ReturnType<typeof processChunk>>;
  try {
    done = await processChunk(ctx, runner, cacheSecret, jobId, chunkNo);
  } catch (err) {
    // Processing cannot go on — an error that no retry will fix, or the last attempt
    // of a transient one: the job fails (and says so) instead of hanging.
    if (!isTransient(err) || (job && job.attemptsMade + 1 >= (job.opts.attempts ?? 1))) {
      ctx.logger.error({ err, jobId, chunkNo }, "job chunk cannot be processed");
      // A cancelled job cannot fail; its chunk ends cancelled instead, so the job still ends.
      const abandoned = await withTransaction(ctx.store.pool, (client) => abandonCancelledChunk(client, jobId, chunkNo, ctx.now()));
      if (abandoned) await announceJobEnd(ctx, jobId, `chunk-${chunkNo}-abandoned`);
      else await failJobWithEvent(ctx, jobId, "processing_failed", "A part of the job could not be processed.");
      return;
    }
    throw err;
  }
  if (!done) return;
  // The chunk is committed: what follows only announces it. A failure here (Redis
  // briefly away) must not fail the job; the sweeps deliver what was not sent.
  const { notices, claimed, fresh } = done;
  await cacheFreshAnswers(ctx, fresh);
  try {
    await notifyDispatcher(ctx, notices.eventIds);
    if (notices.reservationId) {
      await ctx.producer.enqueue(
        "settle.reservation",
        { reservationId: notices.reservationId, firstRow: claimed.first_row, lastRow: claimed.last_row },
        { jobId: `settle-${notices.reservationId}-${chunkNo}` },
      );
    }
    if (notices.finished) await publishCompletion(ctx.redis, ctx.prefix, jobId);
  } catch (err) {
    ctx.logger.warn({ err, jobId, chunkNo }, "chunk completed; its notices were not sent, the sweeps will settle and announce it");
  }
}

/** What a committed chunk still has to announce. */
type ChunkNotices = { finished: boolean; eventIds: string[]; reservationId: string | null };

/** Claims, answers and commits one chunk; null when there was nothing to do (done, cancelled, or a repeat). */
async function processChunk(ctx: WorkerContext, runner: CheckRunner, cacheSecret: string, jobId: string, chunkNo: number) {
  const claimed = await claimChunk(ctx.store.pool, jobId, chunkNo, ctx.now(), CHUNK_LEASE_MS);
  if (!claimed) return null; // done, cancelled, or the job is no longer running
  const rows = await chunkRows(ctx.store.pool, jobId, claimed.first_row, claimed.last_row);
  const { rows: results, fresh } = await answerRows({ store: ctx.store, runner, cacheSecret, now: ctx.now }, rows);
  const now = ctx.now();
  const { rows: rsv } = await ctx.store.pool.query<{ id: string }>(`SELECT id FROM reservations WHERE job_id = $1`, [jobId]);
  const notices = await withTransaction(ctx.store.pool, async (client): Promise<ChunkNotices | null> => {
    const result = await completeChunk(client, jobId, chunkNo, results, now);
    if (!result) return null;
    const eventIds: string[] = [];
    if (result.finished && result.job.status === "completed") eventIds.push(await jobEvent(client, result.job, "job.completed", now));
    else if (result.progressDue) {
      await client.query(`UPDATE jobs SET last_progress_at = $2 WHERE id = $1`, [jobId, now]);
      eventIds.push(await jobEvent(client, result.job, "job.progress", now));
    }
    return { finished: result.finished, eventIds, reservationId: rsv[0]?.id ?? null };
  });
  return notices && { notices, claimed, fresh };
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
    if (!(await failJob(client, jobId, code, message, now))) return null;
    const job = await jobById(client, jobId);
    return { eventId: job ? await jobEvent(client, job, "job.failed", now) : "" };
  });
  if (!failed) return;
  ctx.logger.error({ jobId, code }, "job failed");
  await notifyDispatcher(ctx, [failed.eventId]);
  await announceJobEnd(ctx, jobId, "failed");
}

/** Wakes waiting readers and hands the job's reservation to the billing-ledger (the sweep would, later). */
async function announceJobEnd(ctx: WorkerContext, jobId: string, why: string): Promise<void> {
  await publishCompletion(ctx.redis, ctx.prefix, jobId);
  const { rows } = await ctx.store.pool.query<{ id: string }>(`SELECT id FROM reservations WHERE job_id = $1`, [jobId]);
  if (rows[0]) await ctx.producer.enqueue("settle.reservation", { reservationId: rows[0].id }, { jobId: `settle-${rows[0].id}-${why}` });
}
