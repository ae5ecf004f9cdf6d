// First: tracing hooks modules as they load (./tracing).
import "./tracing";
import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService, type WorkerContext } from "@svc/service-runner";
import { ensureMonthPartitions, purgeExpired } from "@svc/store";
import { loadCheckWorkerConfig } from "./config";
import { runLiveLookup } from "./live-lookups";
import { buildRunner } from "./sources";
import { completeDueTestLookup, sweepDueTestLookups } from "./test-lookups";
import { finishJob, runJobChunk } from "./job-chunks";
import type { WorkDeps } from "./leased-work";
import { reconcileCancelledJobs, reconcileJobChunks, reconcileLiveLookups } from "./reconcile";

/**
 * Makes the coming months' partitions (through svc_create_month_partitions: the
 * check-worker owns no table), then deletes the lookups, job results, cache entries
 * and usage past their retention (reads already 404). Months wholly past retention
 * are dropped by the schema owner's partition upkeep (scripts/partition-upkeep.mjs);
 * where it does not run, their expired rows are deleted here once their month's drop
 * is due (rowDeleteCutoffs).
 */
async function purgeRetention(ctx: WorkerContext, lingerDays: number, stopping: AbortSignal): Promise<void> {
  // Upkeep failing (a lock not granted in time) must not stop the deletes below.
  const created = await ensureMonthPartitions(ctx.store.pool, ctx.now()).catch((err: unknown) => {
    ctx.logger.error({ err }, "making the coming months' partitions failed; retried at the next sweep");
    return [];
  });
  if (stopping.aborted) return;
  if (created.length > 0) ctx.logger.info({ created }, "month partitions made");
  const counts = await purgeExpired(ctx.store.pool, ctx.now(), { lingerMs: lingerDays * 86_400_000 });
  if (Object.values(counts).some((n) => n > 0)) ctx.logger.info(counts, "purged past retention");
}

/** The check-worker: consumes the `checks` queue and runs checks against data sources. */
startService("check-worker", async () => {
  loadDotEnv();
  const config = loadCheckWorkerConfig();
  let deps: WorkDeps | null = null;
  const depsFor = (ctx: WorkerContext): WorkDeps =>
    (deps ??= {
      runner: buildRunner(config, ctx.store, ctx.redis, ctx.logger),
      cacheSecret: config.CACHE_HASH_SECRET,
      lease: { leaseMs: config.WORK_LEASE_MS, renewEveryMs: config.WORK_LEASE_RENEW_MS },
    });
  await runWorkerService({
    name: "check-worker",
    queue: QUEUES.checks,
    config,
    handlers: (ctx) => ({
      "lookup.complete-test": (payload) => completeDueTestLookup(ctx, payload.lookupId),
      "lookup.run": (payload) => runLiveLookup(ctx, depsFor(ctx), payload.lookupId),
      "job.chunk": (payload) => runJobChunk(ctx, depsFor(ctx), payload.jobId, payload.chunkNo),
      "job.finish": (payload) => finishJob(ctx, payload.jobId),
    }),
    // Every bound in docs/architecture.md ("Leases and takeover bounds") is one of these intervals plus a lease.
    periodic: [
      { name: "advertise routes", everyMs: 10_000, run: (ctx) => depsFor(ctx).runner.advertise(30_000) },
      { name: "sweep due test lookups", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => sweepDueTestLookups(ctx) },
      { name: "reconcile live lookups", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => reconcileLiveLookups(ctx, config.LOOKUP_STALE_MS) },
      { name: "reconcile job chunks", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => reconcileJobChunks(ctx, config.CHUNK_STALE_MS) },
      { name: "finish cancelled jobs", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => reconcileCancelledJobs(ctx, config.CHUNK_STALE_MS) },
      { name: "purge past retention", everyMs: config.PURGE_INTERVAL_MS, run: (ctx, stopping) => purgeRetention(ctx, config.RETENTION_LINGER_DAYS, stopping) },
    ],
  });
});
