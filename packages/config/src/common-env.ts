import { Type, type Static } from "@sinclair/typebox";
import { StringEnum } from "./string-enum";

/** Settings every service reads; each service's schema spreads these in. */
export const commonEnv = {
  NODE_ENV: StringEnum(["development", "test", "production"], { default: "development" }),
  LOG_LEVEL: StringEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], { default: "info" }),
  DATABASE_URL: Type.String({ pattern: "^postgres(ql)?://", default: "postgresql://postgres@127.0.0.1:5432/svc_validate" }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /**
   * One Redis (`redis://host:port`) or a Redis Cluster (`redis+cluster://host:port,host:port,...`);
   * `rediss` for TLS. See ./redis-url.
   */
  REDIS_URL: Type.String({ pattern: "^rediss?(\\+cluster)?://", default: "redis://127.0.0.1:6379" }),
  /** Namespaces every Redis key (queues, counters, channels) so fleets can share a server. */
  REDIS_PREFIX: Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,64}$", default: "svc" }),
  /**
   * The fleet's own key for what it writes to Redis: queue messages are tagged with
   * it and completion notices sealed with it, and nothing that does not verify is
   * acted on (docs/security.md). The same value on every service; at least 32
   * characters (32 random bytes, base64: `openssl rand -base64 32`).
   */
  FLEET_MESSAGE_KEY: Type.String({ minLength: 32 }),
  /** While FLEET_MESSAGE_KEY is rotated: the other key, whose messages are accepted too (never used to sign). */
  FLEET_MESSAGE_KEY_ACCEPT: Type.Optional(Type.String({ minLength: 32 })),
  /** Grace period for draining in-flight work on SIGTERM. */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 25_000 }),
};

const commonSchema = Type.Object(commonEnv);
export type CommonEnv = Static<typeof commonSchema>;

/** Settings every queue-consuming service reads. */
export const workerEnv = (defaultConcurrency: number) => ({
  /** Jobs processed at once by this replica. */
  CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: defaultConcurrency }),
  /**
   * How long a job stays locked to this worker without renewal. A worker that dies
   * mid-job (SIGKILL, OOM) has its job handed to another after this long.
   */
  JOB_LOCK_MS: Type.Integer({ minimum: 1_000, maximum: 600_000, default: 30_000 }),
});

/**
 * The operations port (/metrics, /livez, /readyz), apart from the public API.
 * Defaults: gateway 9464, check-worker 9465, billing-ledger 9466, webhook-dispatcher
 * 9467, so a whole fleet runs on one host; 0 turns it off. It has no authentication
 * and /metrics shows money totals, so it listens on loopback unless a deployment
 * says otherwise (the Kubernetes manifests and compose set 0.0.0.0, behind their
 * network rules).
 */
export const opsEnv = (defaultPort: number) => ({
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: defaultPort }),
  METRICS_HOST: Type.String({ minLength: 1, default: "127.0.0.1" }),
});
