import type { WorkerContext } from "@svc/service-runner";
import { jobIdOf, QUEUES, siblingJobId, takeoverJobId, type JobPayload } from "@svc/queues";
import { staleChunks, stalePendingLiveLookups, unfinishedCancelledJobs, type StaleChunk, type StaleChunkCursor, type StaleLookup } from "@svc/store";

/** BullMQ states in which a message is still on its way to a worker (a backlog, not a loss). */
const ON_ITS_WAY = new Set(["waiting", "delayed", "prioritized", "waiting-children"]);

/**
 * Makes sure a message with this id is on its way: nothing to do while one is
 * waiting; one that finished (completed, failed) or was left half-deleted is
 * removed and added again, since BullMQ drops a new message under a kept one's id.
 * One taken by a worker more than `staleMs` ago whose work was still not claimed
 * was taken by a worker that died before claiming it (a claim is the first thing a
 * run does): a sibling message goes out rather than waiting for BullMQ's stalled-job
 * check (up to twice JOB_LOCK_MS).
 */
async function ensureQueued<N extends "job.chunk" | "lookup.run" | "job.finish">(
  ctx: WorkerContext,
  name: N,
  payload: JobPayload<N>,
  jobId: string,
  staleMs: number,
  sibling = false,
): Promise<void> {
  const existing = await ctx.producer.queue(QUEUES.checks).getJob(jobId);
  if (existing) {
    const state = await existing.getState();
    if (state === "active" && !sibling && existing.processedOn !== undefined && existing.processedOn <= ctx.now().getTime() - staleMs) {
      await ensureQueued(ctx, name, payload, siblingJobId(jobId, existing.processedOn), staleMs, true);
      return;
    }
    if (state !== "completed" && state !== "failed" && state !== "unknown") return;
    await existing.remove();
  }
  await ctx.producer.enqueue(name, payload, { jobId });
}

/** Is the message with this id waiting for a worker (so the work is queued, not lost)? */
async function onItsWay(ctx: WorkerContext, jobId: string): Promise<boolean> {
  const existing = await ctx.producer.queue(QUEUES.checks).getJob(jobId);
  return existing ? ON_ITS_WAY.has(await existing.getState()) : false;
}

/** Pages one reconciler pass walks at most (a pass is cut short, never stuck, in a flood). */
const MAX_PAGES = 20;

/**
 * Job chunks Postgres says may have lost their work, whatever Redis remembers:
 * running with a lease that ran out (the worker died or stopped renewing, or gave
 * the chunk back after a failure), or queued long enough that their message should
 * have been taken (lost with Redis, or stuck on a dead worker). Each gets a message
 * of its own for the chunk's next claim (`-a<claims so far>`), so neither a message
 * still held by a dead worker nor a finished one can stand in its way; the chunk's
 * claim makes any duplicate harmless. Every page is walked, so chunks that are only
 * waiting their turn in a backlog cannot hide lost ones.
 */
export async function reconcileJobChunks(ctx: WorkerContext, staleMs: number, pageSize = 500): Promise<void> {
  const now = ctx.now();
  let after: StaleChunkCursor | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const chunks = await staleChunks(ctx.store.pool, now, new Date(now.getTime() - staleMs), pageSize, after);
    for (const chunk of chunks) {
      const payload = { jobId: chunk.job_id, chunkNo: chunk.chunk_no };
      // Never claimed, and the gateway's message is only waiting its turn (a backlog).
      if (chunk.status === "queued" && chunk.attempts === 0 && (await onItsWay(ctx, jobIdOf("job.chunk", payload)))) continue;
      await ensureQueued(ctx, "job.chunk", payload, takeoverJobId("job.chunk", payload, chunk.attempts), staleMs);
    }
    if (chunks.length < pageSize) return;
    after = chunks[chunks.length - 1] as StaleChunk;
  }
}

/**
 * Live lookups Postgres says are still pending with no live run: never claimed
 * though created `staleMs` ago (message lost, unless it is only waiting its turn),
 * or claimed with a lease that ran out. Like chunks, each gets a message of its own
 * for its next run; the run's claim makes a duplicate harmless.
 */
export async function reconcileLiveLookups(ctx: WorkerContext, staleMs: number, pageSize = 500): Promise<void> {
  const now = ctx.now();
  let after: StaleLookup | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const lookups = await stalePendingLiveLookups(ctx.store.pool, now, new Date(now.getTime() - staleMs), pageSize, after);
    for (const lookup of lookups) {
      const payload = { lookupId: lookup.id };
      if (!lookup.claimed && (await onItsWay(ctx, jobIdOf("lookup.run", payload)))) continue;
      await ensureQueued(ctx, "lookup.run", payload, takeoverJobId("lookup.run", payload, lookup.attempts), staleMs);
    }
    if (lookups.length < pageSize) return;
    after = lookups[lookups.length - 1] as StaleLookup;
  }
}

/**
 * Cancelled jobs the gateway left to be finished (nothing in flight) whose
 * `job.finish` message never arrived (Redis lost it, or it could not be sent):
 * each gets one again. Finishing is idempotent, so a duplicate does nothing.
 */
export async function reconcileCancelledJobs(ctx: WorkerContext, staleMs: number, limit = 500): Promise<void> {
  const now = ctx.now();
  for (const jobId of await unfinishedCancelledJobs(ctx.store.pool, new Date(now.getTime() - staleMs), limit)) {
    await ensureQueued(ctx, "job.finish", { jobId }, jobIdOf("job.finish", { jobId }), staleMs);
  }
}
