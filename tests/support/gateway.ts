import type { Server } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { createLogger } from "@svc/process";
import { createStore, KeyedSemaphore, type Store } from "@svc/store";
import { CompletionWaiter, createRedis, fleetOf, Producer, waitForRedis } from "@svc/queues";
import { createApp, docBaseUrl, type GatewayDeps } from "../../services/gateway/src/app";
import { answerClientErrors } from "../../services/gateway/src/http/client-errors";
import { CacheInvalidator, createCaches } from "../../services/gateway/src/cache/caches";
import { BulkIntake } from "../../services/gateway/src/bulk";
import { ensurePublicSandbox } from "../../services/gateway/src/bootstrap";
import { loadGatewayConfig } from "../../services/gateway/src/config";
import { testLookupWriter } from "../../services/gateway/src/lookups/test-batch";
import { ReplicaReads } from "../../services/gateway/src/reads/replica-reads";
import { createTestEnv, serviceEnv, type TestEnv } from "./env";
import type { Resolve } from "@svc/webhooks";

/** Tests never query a real resolver: host names fail unless a test injects answers. */
const noResolver: Resolve = async () => {
  throw new Error("no DNS in tests");
};

export type TestGateway = {
  env: TestEnv;
  deps: GatewayDeps;
  store: Store;
  /** Base URL of a real HTTP server on loopback. */
  url: string;
  server: Server;
  http: () => request.Agent;
  /** Moves the injectable clock. */
  setNow(date: Date | null): void;
  close(): Promise<void>;
};

/**
 * The gateway application in this process, listening on a real loopback port,
 * wired to the real Postgres and Redis of a fresh test environment.
 */
export async function startTestGateway(options: { env?: TestEnv; config?: Record<string, string>; host?: string; resolveHost?: Resolve } = {}): Promise<TestGateway> {
  const env = options.env ?? (await createTestEnv());
  const config = loadGatewayConfig({ ...serviceEnv(env), PORT: "0", TEST_KEY_POW_DIFFICULTY: "4", ...options.config });
  const logger = createLogger("gateway-test", process.env.TEST_LOG_LEVEL ?? "silent");
  const store = createStore({ databaseUrl: env.databaseUrl, poolSize: 10, applicationName: "gateway-test", replicaUrl: config.DATABASE_REPLICA_URL, replicaPoolSize: config.DATABASE_REPLICA_POOL_SIZE });
  const redis = createRedis(env.redisUrl, "producer", "gateway-test");
  const subscriber = createRedis(env.redisUrl, "subscriber", "gateway-test-sub");
  await Promise.all([waitForRedis(redis), waitForRedis(subscriber)]);
  const fleet = fleetOf(config);
  const producer = new Producer(redis, fleet);
  const waiter = new CompletionWaiter(subscriber, fleet);
  await waiter.start();
  await ensurePublicSandbox(store, config.KEY_HASH_SECRET);
  const bulk = BulkIntake.fromConfig(config);
  const caches = createCaches();
  const invalidator = new CacheInvalidator(env.databaseUrl, caches, logger);
  await invalidator.start();
  let fixedNow: Date | null = null;
  const reads = new ReplicaReads(store.pool, store.replica, { maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS, logger });
  await reads.start();
  const deps: GatewayDeps = { config, logger, store, redis, fleet, producer, waiter, caches, accountTurns: new KeyedSemaphore(config.ACCOUNT_CONCURRENCY), bulk, testLookups: testLookupWriter(store), reads, resolveHost: options.resolveHost ?? noResolver, now: () => fixedNow ?? new Date() };
  // Listen first so the app is built knowing its real base URL (poll URLs, doc links).
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, options.host ?? "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host === "::" ? "[::1]" : "127.0.0.1"}:${port}`;
  deps.config.publicBaseUrl = url;
  server.on("request", createApp(deps));
  answerClientErrors(server, () => docBaseUrl(deps));
  return {
    env,
    deps,
    store,
    url,
    server,
    http: () => request.agent(url),
    setNow(date) {
      fixedNow = date;
    },
    async close() {
      waiter.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await producer.close();
      await Promise.all([redis.quit(), subscriber.quit()]);
      await invalidator.stop();
      await bulk.close();
      await deps.testLookups.drain();
      reads.stop();
      await store.close();
    },
  };
}
