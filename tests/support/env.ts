import { createHash, randomBytes } from "node:crypto";
import { cloneDatabase, databaseUrl, redisUrl } from "./pg-admin";

export type TestEnv = {
  databaseUrl: string;
  redisUrl: string;
  /** Redis key prefix owned by this test file (queues, counters, channels). */
  redisPrefix: string;
  /** Server secret used to hash keys in this environment. */
  keyHashSecret: string;
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
  };
}

/** The environment variables a service process needs to run inside `env`. */
export function serviceEnv(env: TestEnv, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    REDIS_PREFIX: env.redisPrefix,
    KEY_HASH_SECRET: env.keyHashSecret,
    CACHE_HASH_SECRET: `${env.keyHashSecret}-cache`,
    DATA_ENCRYPTION_KEY: createHash("sha256").update(`${env.keyHashSecret}-data`).digest("base64"),
    SHUTDOWN_TIMEOUT_MS: "10000",
    // Off unless a test asks for it: services' default ports would collide between parallel test files.
    METRICS_PORT: "0",
    ...extra,
  };
}
