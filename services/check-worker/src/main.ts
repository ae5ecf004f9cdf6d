import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService, type WorkerContext } from "@svc/core";
import { purgeExpired, staleChunks, stalePendingLiveLookups } from "@svc/store";
import type { CheckRunner } from "@svc/sources";
import { loadCheckWorkerConfig } from "./config";
import { runLiveLookup } from "./live-lookups";
import { buildRunner } from "./sources";
import { completeDueTestLookup, sweepDueTestLookups } from "./test-lookups";
import { runJobChunk } from "./job-chunks";

/**
 * Postgres says which live lookups are still pending; re-enqueue them (the job id
 * makes this a no-op while the original message is alive) and retry any whose job
 * gave up, so a lost message or an emptied Redis never strands a lookup.
 */
async function reconcileLiveLookups(ctx: WorkerContext): Promise<void> {
  for (const lookupId of await stalePendingLiveLookups(ctx.store.pool, new Date(ctx.now().getTime() - 10_000))) {
    const jobId = `run-${lookupId}`;
    const existing = await ctx.producer.queue(QUEUES.checks).getJob(jobId);
    if (existing && (await existing.isFailed())) await existing.retry();
    else if (!existing) await ctx.producer.enqueue("lookup.run", { lookupId }, { jobId });
  }
}

/**
 * Job chunks Postgres says are unfinished but may have lost their message (Redis
 * emptied, a job given up): enqueue them again; the chunk's own claim makes a
 * duplicate harmless.
 */
async function reconcileJobChunks(ctx: WorkerContext, staleMs: number): Promise<void> {
  for (const chunk of await staleChunks(ctx.store.pool, ctx.now(), staleMs)) {
    const jobId = `chunk-${chunk.job_id}-${chunk.chunk_no}`;
    const existing = await ctx.producer.queue(QUEUES.checks).getJob(jobId);
    if (existing && ((await existing.isFailed()) || (await existing.isCompleted()))) await existing.remove();
    else if (existing) continue;
    await ctx.producer.enqueue("job.chunk", { jobId: chunk.job_id, chunkNo: chunk.chunk_no }, { jobId });
  }
}

/** Deletes lookups, job results, cache entries and usage past their retention (reads already 404). */
async function purgeRetention(ctx: WorkerContext): Promise<void> {
  const counts = await purgeExpired(ctx.store.pool, ctx.now());
  if (Object.values(counts).some((n) => n > 0)) ctx.logger.info(counts, "purged past retention");
}

/** The check-worker: consumes the `checks` queue and runs checks against data sources. */
startService("check-worker", async () => {
  loadDotEnv();
  const config = loadCheckWorkerConfig();
  let runner: CheckRunner | null = null;
  const runnerFor = (ctx: WorkerContext) => (runner ??= buildRunner(config, ctx.store, ctx.redis, ctx.logger));
  await runWorkerService({
    name: "check-worker",
    queue: QUEUES.checks,
    config,
    handlers: (ctx) => ({
      "lookup.complete-test": (payload) => completeDueTestLookup(ctx, payload.lookupId),
      "lookup.run": (payload) => runLiveLookup(ctx, runnerFor(ctx), config.CACHE_HASH_SECRET, payload.lookupId),
      "job.chunk": (payload, job) => runJobChunk(ctx, runnerFor(ctx), config.CACHE_HASH_SECRET, payload.jobId, payload.chunkNo, job),
    }),
    periodic: [
      { name: "advertise routes", everyMs: 10_000, run: (ctx) => runnerFor(ctx).advertise(30_000) },
      { name: "sweep due test lookups", everyMs: config.SWEEP_INTERVAL_MS, run: sweepDueTestLookups },
      { name: "reconcile live lookups", everyMs: Math.max(config.SWEEP_INTERVAL_MS, 5_000), run: reconcileLiveLookups },
      { name: "reconcile job chunks", everyMs: Math.max(config.SWEEP_INTERVAL_MS, 5_000), run: (ctx) => reconcileJobChunks(ctx, config.CHUNK_STALE_MS) },
      { name: "purge past retention", everyMs: config.PURGE_INTERVAL_MS, run: purgeRetention },
    ],
  });
});
