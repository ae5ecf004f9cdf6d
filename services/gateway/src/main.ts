// First: tracing hooks modules as they load (./tracing).
import "./tracing";
import cluster from "node:cluster";
import { createServer } from "node:http";
import { loadDotEnv } from "@svc/config";
import { createLogger, ShutdownManager } from "@svc/process";
import { metrics } from "@svc/metrics";
import { createStore, KeyedSemaphore } from "@svc/store";
import { CompletionWaiter, createRedis, fleetOf, Producer } from "@svc/queues";
import { createApp, docBaseUrl, type GatewayDeps } from "./app";
import { answerClientErrors } from "./http/client-errors";
import { CacheInvalidator, createCaches } from "./cache/caches";
import { BulkIntake } from "./bulk";
import { ensurePublicSandbox } from "./bootstrap";
import { loadGatewayConfig } from "./config";
import { systemResolver } from "@svc/webhooks";
import { awaitDependencies, startServiceOps } from "@svc/service-runner";
import { gatewayMetrics, startPrimaryOps } from "./ops";
import { startPrimaryQueueDashboard, startQueueDashboard } from "./queue-dashboard/queue-dashboard";
import { testLookupWriter } from "./lookups/test-batch";
import { ReplicaReads } from "./reads/replica-reads";

/**
 * The API gateway: validates, authorises and enqueues; it only produces to queues.
 * Start-up fails fast on bad configuration; SIGTERM stops accepting, lets
 * in-flight requests finish (held `wait` requests are woken to answer now), then
 * closes queues, Redis and the database.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const config = loadGatewayConfig();
  const logger = createLogger("gateway", config.LOG_LEVEL);
  const shutdown = new ShutdownManager(logger, config.SHUTDOWN_TIMEOUT_MS);
  shutdown.listen();

  const store = createStore({
    databaseUrl: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    applicationName: "gateway",
    onConnectionLost: (err) => logger.warn({ err }, "database connection lost mid-request (that request fails retryably)"),
    replicaUrl: config.DATABASE_REPLICA_URL,
    replicaPoolSize: config.DATABASE_REPLICA_POOL_SIZE,
  });
  const redis = createRedis(config.REDIS_URL, "producer", "gateway");
  const subscriber = createRedis(config.REDIS_URL, "subscriber", "gateway-sub");
  await awaitDependencies({ store, redis: [redis, subscriber], config });
  const fleet = fleetOf(config);
  const producer = new Producer(redis, fleet, (err) => logger.error({ err }, "queue error"));
  const waiter = new CompletionWaiter(subscriber, fleet, () => metrics.noticesRefused().inc());
  await waiter.start();
  if (config.SANDBOX_KEY_ENABLED) await ensurePublicSandbox(store, config.KEY_HASH_SECRET);

  const bulk = BulkIntake.fromConfig(config);
  const intakePriority = await bulk.priority();
  if (config.INTAKE_THREAD_SCHED_IDLE && intakePriority !== "idle") {
    logger.warn("intake threads could not be moved to SCHED_IDLE (no `chrt`?); they run niced only, and bulk requests compete harder with other work on this host");
  }
  const caches = createCaches();
  const invalidator = new CacheInvalidator(config.DATABASE_URL, caches, logger);
  await invalidator.start();

  // Not a dependency: without its replica the gateway reads the primary (and says so once).
  const reads = new ReplicaReads(store.pool, store.replica, { maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS, logger });
  await reads.start();

  const deps: GatewayDeps = { config, logger, store, redis, fleet, producer, waiter, caches, accountTurns: new KeyedSemaphore(config.ACCOUNT_CONCURRENCY), bulk, testLookups: testLookupWriter(store), reads, resolveHost: systemResolver(5_000), now: () => new Date() };
  const server = createServer();
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 60_000;

  // Not ready from the signal on (/readyz), still serving while load balancers notice.
  shutdown.register("drain delay", 5, () => new Promise<void>((resolve) => setTimeout(resolve, config.DRAIN_DELAY_MS)));
  shutdown.register("stop accepting and drain requests", 10, async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    waiter.close();
    await closed;
  });
  // A request whose client left is not waited for by server.close; its lookup may still be queued.
  shutdown.register("finish test lookup writes", 15, () => deps.testLookups.drain());
  shutdown.register("close queues", 20, () => producer.close());
  shutdown.register("stop intake threads", 25, () => bulk.close());
  shutdown.register("close redis", 30, async () => {
    await Promise.all([redis.quit().catch(() => undefined), subscriber.quit().catch(() => undefined)]);
  });
  shutdown.register("close database", 40, async () => {
    await invalidator.stop();
    reads.stop();
    await store.close();
  });
  gatewayMetrics(bulk);
  const ops = await startServiceOps({ service: "gateway", config, logger, store, redis: [redis, subscriber], checks: [{ name: "accepting", check: () => server.listening }], draining: () => shutdown.isShuttingDown });
  shutdown.register("close operations port", 50, () => ops.close());

  // Listen first, so that with PORT=0 the base URL names the port actually bound.
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.PORT;
  if (!config.PUBLIC_BASE_URL) config.publicBaseUrl = `http://localhost:${port}`;
  server.on("request", createApp(deps));
  answerClientErrors(server, () => docBaseUrl(deps));
  // The queue dashboard, on its own port: here when this process is the whole gateway, else the cluster primary's.
  if (!cluster.isWorker) {
    const dashboard = await startQueueDashboard(config, logger);
    if (dashboard) shutdown.register("close queue dashboard", 45, () => dashboard.close());
  }
  logger.info({ port, baseUrl: config.publicBaseUrl }, "gateway listening");
  const missing = GATEWAY_NODE_FLAGS.filter((f) => !process.execArgv.some((a) => a.split("=")[0] === f.split("=")[0]));
  if (missing.length > 0) logger.warn({ flags: missing }, "node was started without the gateway's flags; bulk requests will compete harder with request handling");
}

/**
 * Node flags the gateway is meant to run with (launchers pass them: scripts/fleet.mjs,
 * docker/, k8s/; the supervisor below passes them to its processes). V8's helper
 * threads (GC, compilation) serve the intake threads' isolates too and run at normal
 * priority; one instead of four keeps a bulk flood's garbage collection from
 * competing with request handling (BENCHMARKS.md, fairness).
 */
const GATEWAY_NODE_FLAGS = ["--v8-pool-size=1"];

/**
 * With WEB_CONCURRENCY > 1 the primary only supervises: it forks that many gateway
 * processes sharing the port, replaces any that die, and on SIGTERM passes the
 * signal on and exits once every process has drained.
 */
function supervise(processes: number): void {
  let stopping = false;
  const own = new Set(process.execArgv.map((a) => a.split("=")[0]));
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...GATEWAY_NODE_FLAGS.filter((f) => !own.has(f.split("=")[0]))] });
  const fork = () => cluster.fork();
  // The operations port and the queue dashboard first: a port in use (or bad configuration) stops the start-up before any process forks.
  startPrimaryOps(() => stopping)
    .then(() => startPrimaryQueueDashboard())
    .then(
      () => {
        if (stopping) process.exit(0);
        for (let i = 0; i < processes; i += 1) fork();
      },
      (err) => {
        process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  // A process that fails before any has listened failed start-up (configuration,
  // Postgres or Redis unreachable: it said why on stderr); replacing it would only
  // repeat that, so the whole gateway exits non-zero as a single process would.
  let listened = false;
  let exitCode = 0;
  cluster.on("listening", () => (listened = true));
  cluster.on("exit", (worker, code, signal) => {
    if (!stopping && !listened) {
      stopping = true;
      exitCode = 1;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill("SIGTERM");
    }
    if (stopping) {
      if (code !== 0) exitCode = 1;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode);
      return;
    }
    process.stderr.write(`gateway process ${worker.process.pid} exited (${signal ?? code}); starting another\n`);
    setTimeout(fork, 1_000);
  });
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGTERM");
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

const processes = Number(process.env.WEB_CONCURRENCY ?? 1);
if (cluster.isPrimary && Number.isInteger(processes) && processes > 1) supervise(processes);
else main().catch((err) => {
  // Configuration errors carry a readable list of variables; print it plainly.
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
