import cluster from "node:cluster";
import type { Logger } from "@svc/process";
import { createDatabaseProbe, type Store } from "@svc/store";
import {
  answerPrimary,
  localSource,
  metrics,
  onScrape,
  readinessOf,
  READINESS_CHECK_TIMEOUT_MS,
  startOpsServer,
  startProcessMetrics,
  type ReadinessCheck,
} from "@svc/metrics";
import type { RedisClient } from "@svc/queues";

export type ServiceOps = {
  /** The operations port bound, or null when off (METRICS_PORT=0) or answered by a cluster primary. */
  port: number | null;
  close(): Promise<void>;
};

/**
 * Redis answers: every connection is connected, and the first answers PING within
 * the check's deadline (producer connections fail at once when disconnected).
 */
export function redisCheck(connections: readonly RedisClient[]): ReadinessCheck {
  return {
    name: "redis",
    async check() {
      if (connections.some((r) => r.status !== "ready")) return false;
      await connections[0]?.ping();
    },
  };
}

/**
 * What every service runs besides its work: process metrics and build info, its
 * Postgres pool's gauges, and the operations port (/metrics, /livez, /readyz) on
 * METRICS_PORT. Readiness: Postgres answers (on a connection of its own), Redis
 * answers, the service's own checks pass (consumer running, server accepting),
 * and it is not draining. In a node:cluster worker nothing listens: the primary
 * asks this process over IPC (see @svc/metrics's cluster.ts).
 */
export async function startServiceOps(options: {
  service: string;
  config: { DATABASE_URL: string; METRICS_PORT: number; METRICS_HOST: string };
  logger: Logger;
  store: Store;
  redis: readonly RedisClient[];
  checks: readonly ReadinessCheck[];
  draining: () => boolean;
}): Promise<ServiceOps> {
  const { config, store } = options;
  startProcessMetrics(options.service);
  onScrape("postgres pool", () => {
    const pool = metrics.dbPool();
    pool.set({ state: "total" }, store.pool.totalCount);
    pool.set({ state: "idle" }, store.pool.idleCount);
    pool.set({ state: "waiting" }, store.pool.waitingCount);
  });
  const probe = createDatabaseProbe({ databaseUrl: config.DATABASE_URL, applicationName: options.service });
  const checks: ReadinessCheck[] = [
    { name: "postgres", check: () => probe.check(READINESS_CHECK_TIMEOUT_MS) },
    redisCheck(options.redis),
    ...options.checks,
    { name: "running", check: () => !options.draining() },
  ];
  const readiness = readinessOf(checks);
  if (cluster.isWorker) {
    answerPrimary(readiness);
    return { port: null, close: () => probe.close() };
  }
  if (config.METRICS_PORT === 0) return { port: null, close: () => probe.close() };
  const server = await startOpsServer({ port: config.METRICS_PORT, host: config.METRICS_HOST, source: localSource(readiness), draining: options.draining });
  options.logger.info({ metricsPort: server.port }, "operations port listening (/metrics, /livez, /readyz)");
  return {
    port: server.port,
    async close() {
      await server.close();
      await probe.close();
    },
  };
}
