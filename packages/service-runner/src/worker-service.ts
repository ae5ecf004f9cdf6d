import type { CommonEnv } from "@svc/config";
import { createConsumer, createRedis, fleetOf, Producer, watchQueue, type Fleet, type Handlers, type QueueName } from "@svc/queues";
import { createLogger, ShutdownManager, type Logger } from "@svc/process";
import { createStore, type Store } from "@svc/store";
import type { RedisClient } from "@svc/queues";
import { awaitDependencies } from "./dependencies";
import { startServiceOps } from "./service-ops";

export type WorkerContext = {
  logger: Logger;
  store: Store;
  /** Non-blocking connection for enqueuing and publishing. */
  redis: RedisClient;
  producer: Producer;
  /** REDIS_PREFIX, for the service's own keys (the fleet's queues and notices go through `fleet`). */
  prefix: string;
  fleet: Fleet;
  now: () => Date;
};

/**
 * Work a worker service does every `everyMs`. `stopping` aborts when the service
 * shuts down: a task that may wait long (for a lock) gives up then, since shutdown
 * waits for running tasks before it stops taking queue messages.
 */
export type PeriodicTask = { name: string; everyMs: number; run: (ctx: WorkerContext, stopping: AbortSignal) => Promise<void> };

export type WorkerServiceOptions<Q extends QueueName> = {
  name: string;
  queue: Q;
  config: CommonEnv & { CONCURRENCY: number; JOB_LOCK_MS: number; METRICS_PORT: number; METRICS_HOST: string };
  handlers: (ctx: WorkerContext) => Handlers<Q>;
  periodic?: PeriodicTask[];
  /** Releases the service's own resources, after running jobs finished. */
  close?: () => Promise<void>;
  /** Registers the service's own scrape-time gauges (called once, before consuming). */
  metrics?: (ctx: WorkerContext) => void;
};

/**
 * The shape every worker service shares: connect to Postgres and Redis, start
 * consuming only when both answer, run periodic sweeps, and on SIGTERM stop taking
 * work, let running jobs finish (BullMQ's close waits for them), then close
 * queues, Redis and the database. A job cut off by a kill is re-delivered after
 * its lock expires, so handlers are written to be idempotent.
 */
export async function runWorkerService<Q extends QueueName>(opts: WorkerServiceOptions<Q>): Promise<void> {
  const { config } = opts;
  const logger = createLogger(opts.name, config.LOG_LEVEL);
  const shutdown = new ShutdownManager(logger, config.SHUTDOWN_TIMEOUT_MS);
  shutdown.listen();

  const store = createStore({
    databaseUrl: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    applicationName: opts.name,
    onConnectionLost: (err) => logger.warn({ err }, "database connection lost mid-use (its work fails and is retried)"),
  });
  const redis = createRedis(config.REDIS_URL, "producer", opts.name);
  const blocking = createRedis(config.REDIS_URL, "worker", `${opts.name}-worker`);
  await awaitDependencies({ store, redis: [redis, blocking], config });
  const fleet = fleetOf(config);
  const producer = new Producer(redis, fleet, (err) => logger.error({ err }, "queue error"));
  const ctx: WorkerContext = { logger, store, redis, producer, prefix: config.REDIS_PREFIX, fleet, now: () => new Date() };

  const worker = createConsumer(opts.queue, opts.handlers(ctx), {
    connection: blocking,
    fleet,
    concurrency: config.CONCURRENCY,
    lockDurationMs: config.JOB_LOCK_MS,
    onError: (err) => logger.error({ err }, "worker error"),
  });
  worker.on("failed", (job, err) => logger.warn({ jobId: job?.id, job: job?.name, attempts: job?.attemptsMade, err }, "job failed"));
  watchQueue(producer.queue(opts.queue), redis);
  opts.metrics?.(ctx);
  const ops = await startServiceOps({
    service: opts.name,
    config,
    logger,
    store,
    redis: [redis, blocking],
    checks: [{ name: "consumer", check: () => worker.isRunning() }],
    draining: () => shutdown.isShuttingDown,
  });

  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<void>>();
  const stopping = new AbortController();
  for (const task of opts.periodic ?? []) {
    let busy = false;
    const tick = () => {
      if (busy || shutdown.isShuttingDown) return;
      busy = true;
      const p = task
        .run(ctx, stopping.signal)
        .catch((err) => logger.error({ err, task: task.name }, "periodic task failed"))
        .finally(() => {
          busy = false;
          running.delete(p);
        });
      running.add(p);
    };
    timers.push(setInterval(tick, task.everyMs));
    tick();
  }

  shutdown.register("stop periodic tasks", 10, async () => {
    for (const t of timers) clearInterval(t);
    stopping.abort();
    await Promise.all([...running]);
  });
  shutdown.register("finish running jobs", 20, () => worker.close());
  if (opts.close) shutdown.register("close service resources", 25, opts.close);
  shutdown.register("close queues", 30, () => producer.close());
  shutdown.register("close redis", 40, async () => {
    await Promise.all([redis.quit().catch(() => undefined), blocking.quit().catch(() => undefined)]);
  });
  shutdown.register("close database", 50, () => store.close());
  shutdown.register("close operations port", 60, () => ops.close());

  void worker.run();
  await worker.waitUntilReady();
  logger.info({ queue: opts.queue, concurrency: config.CONCURRENCY }, "consuming");
}

/** Entry-point wrapper: prints a start-up failure plainly and exits non-zero. */
export function startService(name: string, main: () => Promise<void>): void {
  main().catch((err) => {
    process.stderr.write(`${name} failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
