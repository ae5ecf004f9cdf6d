import { commonEnv, ConfigError, loadConfig, Type, workerEnv } from "@svc/config";

export const CheckWorkerEnv = Type.Object({
  ...commonEnv,
  ...workerEnv(50),
  /** How often to sweep Postgres for work whose queue message was lost. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 2_000 }),
  /** A queued job chunk untouched this long is re-enqueued (its message may be lost). */
  CHUNK_STALE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /** How often data past its retention period is deleted. */
  PURGE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 86_400_000, default: 60_000 }),
  /** Keys the identifier hashes of the answer cache, so cached rows cannot be reversed by enumeration. */
  CACHE_HASH_SECRET: Type.String({ minLength: 32 }),
  /** Vendor routes for whatsapp, signal.registered and number.hlr (docs/vendor-contract.md), tried in order. */
  VENDOR_PRIMARY_URL: Type.Optional(Type.String({ pattern: "^https?://" })),
  VENDOR_PRIMARY_KEY: Type.String({ default: "" }),
  VENDOR_SECONDARY_URL: Type.Optional(Type.String({ pattern: "^https?://" })),
  VENDOR_SECONDARY_KEY: Type.String({ default: "" }),
  VENDOR_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 5_000 }),
  VENDOR_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 200 }),
  VENDOR_RETRIES: Type.Integer({ minimum: 0, maximum: 5, default: 2 }),
  /** E-mail probe: our public host name (EHLO) and return address (MAIL FROM). Unset = no e-mail route. */
  SMTP_HELO_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  SMTP_MAIL_FROM: Type.String({ default: "" }),
  SMTP_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 25 }),
  SMTP_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  SMTP_STEP_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 20_000 }),
  SMTP_DEADLINE_MS: Type.Integer({ minimum: 200, maximum: 300_000, default: 40_000 }),
  SMTP_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  /** Resolvers for MX lookups, "ip" or "ip:port", comma-separated; empty = the system's. */
  DNS_SERVERS: Type.String({ default: "" }),
  DNS_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 5_000 }),
  /**
   * Development and tests only: let the probe connect to private and loopback mail
   * servers. Refused when NODE_ENV is production.
   */
  SMTP_ALLOW_PRIVATE_ADDRESSES: Type.Boolean({ default: false }),
});

export function loadCheckWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(CheckWorkerEnv, env);
  if (config.SMTP_ALLOW_PRIVATE_ADDRESSES && config.NODE_ENV === "production") {
    throw new ConfigError(["SMTP_ALLOW_PRIVATE_ADDRESSES is for development and tests and cannot be set in production"]);
  }
  return config;
}
export type CheckWorkerConfig = ReturnType<typeof loadCheckWorkerConfig>;
