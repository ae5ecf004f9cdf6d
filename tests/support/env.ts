import { createHash, randomBytes } from "node:crypto";
import { FleetKeys, MESSAGE_TAG_FIELD, type Fleet, type QueueName } from "@svc/queues";
import { DEFAULT_SERVICE_ROLES, type ServiceName } from "@svc/store";
import { cloneDatabase, databaseUrl, redisUrl } from "./pg-admin";

export type TestEnv = {
  databaseUrl: string;
  redisUrl: string;
  /** Redis key prefix owned by this test file (queues, counters, channels). */
  redisPrefix: string;
  /** Server secret used to hash keys in this environment. */
  keyHashSecret: string;
  /** FLEET_MESSAGE_KEY of this environment's services. */
  messageKey: string;
};

/**
 * A fresh database cloned from the run's migrated template, and a fresh Redis
 * prefix: each test file owns its data and its queues.
 */
export async function createTestEnv(): Promise<TestEnv> {
  const runId = process.env.SVC_TEST_RUN_ID;
  const template = process.env.SVC_TEST_TEMPLATE_DB;
  if (!runId || !template) throw new Error("tests must run through jest's global setup (npm test)");
  const suffix = randomBytes(4).toString("hex");
  const name = `svc_t_${runId}_${suffix}`;
  await cloneDatabase(template, name);
  return {
    databaseUrl: databaseUrl(name),
    redisUrl: redisUrl(),
    redisPrefix: `t:${runId}:${suffix}`,
    keyHashSecret: `test-secret-${randomBytes(16).toString("hex")}`,
    messageKey: randomBytes(32).toString("base64"),
  };
}

/** The fleet of `env` on Redis (its prefix, or `prefix`, and its message key), for producers, consumers and waiters made by tests. */
export function testFleet(env: Pick<TestEnv, "redisPrefix" | "messageKey">, prefix = env.redisPrefix): Fleet {
  return { prefix, keys: new FleetKeys(env.messageKey) };
}

/**
 * The environment variables a service process needs to run inside `env`. Given the
 * service, it connects as that service would be deployed: with its own database role
 * (the run's template database holds every role's grants: global-setup.ts) and, on
 * the run's own Redis, as its own ACL user — so every fleet test also shows each
 * service needs nothing more than it is granted.
 */
export function serviceEnv(env: TestEnv, extra: Record<string, string> = {}, service?: ServiceName): Record<string, string> {
  return {
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DATABASE_URL: service ? serviceDatabaseUrl(env.databaseUrl, service) : env.databaseUrl,
    REDIS_URL: service ? serviceRedisUrl(env.redisUrl, service) : env.redisUrl,
    REDIS_PREFIX: env.redisPrefix,
    KEY_HASH_SECRET: env.keyHashSecret,
    CACHE_HASH_SECRET: `${env.keyHashSecret}-cache`,
    DATA_ENCRYPTION_KEY: createHash("sha256").update(`${env.keyHashSecret}-data`).digest("base64"),
    FLEET_MESSAGE_KEY: env.messageKey,
    SHUTDOWN_TIMEOUT_MS: "10000",
    // Off unless a test asks for it: services' default ports would collide between parallel test files.
    METRICS_PORT: "0",
    ...extra,
  };
}

/**
 * `data` as the fleet of `env` writes a message of job `name` on `queue`: with the
 * tag its key gives (a test adding a message straight to BullMQ, bypassing Producer).
 */
export function tagged(env: Pick<TestEnv, "messageKey">, queue: QueueName, name: string, data: Record<string, unknown>, keys = new FleetKeys(env.messageKey)): Record<string, unknown> {
  return { ...data, [MESSAGE_TAG_FIELD]: keys.signMessage(queue, name, data) };
}

/** `url` (a test database's) as `service`'s own login role (trust authentication on this machine: no password). */
export function serviceDatabaseUrl(url: string, service: ServiceName): string {
  const u = new URL(url);
  u.username = DEFAULT_SERVICE_ROLES[service];
  u.password = "";
  return u.toString();
}

/** The run's ACL user of `service` (global-setup.ts): `t-<run>-<service>`, allowed only keys and channels under `t:<run>:`. */
export function testRedisUser(service: ServiceName, runId = process.env.SVC_TEST_RUN_ID ?? ""): string {
  return `t-${runId}-${service}`;
}

/**
 * `url` with `service`'s ACL user of this run, when it is the run's own Redis (where
 * the setup made the users); a Redis a test started for itself has no such users.
 */
export function serviceRedisUrl(url: string, service: ServiceName): string {
  const password = process.env.SVC_TEST_REDIS_PASSWORD;
  if (!password || url !== redisUrl()) return url;
  return url.replace(/^(rediss?(?:\+cluster)?:\/\/)/, `$1${encodeURIComponent(testRedisUser(service))}:${password}@`);
}
