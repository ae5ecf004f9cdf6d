import { commonEnv, ConfigError, loadConfig, opsEnv, Type, workerEnv } from "@svc/config";

export const CheckWorkerEnv = Type.Object({
  ...commonEnv,
  ...workerEnv(50),
  ...opsEnv(9465),
  /** How often to sweep Postgres for work whose queue message or worker was lost (and for due test lookups). */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 2_000 }),
  /**
   * How long a claim on a job chunk or a live lookup holds it without renewal. A
   * worker that dies (or whose message vanished) has its work taken over this long
   * after its last renewal, plus one sweep.
   */
  WORK_LEASE_MS: Type.Integer({ minimum: 300, maximum: 600_000, default: 20_000 }),
  /** How often a running attempt renews its lease (at most a third of WORK_LEASE_MS). */
  WORK_LEASE_RENEW_MS: Type.Integer({ minimum: 100, maximum: 200_000, default: 5_000 }),
  /** A queued job chunk untouched this long is re-enqueued unless its message is waiting in the queue. */
  CHUNK_STALE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 10_000 }),
  /** A live lookup no run has claimed this long after its creation is re-enqueued unless its message is waiting. */
  LOOKUP_STALE_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 10_000 }),
  /** How often data past its retention period is deleted. */
  PURGE_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 86_400_000, default: 60_000 }),
  /**
   * How many days an expired lookup or job (already 404 to every read) may wait for its
   * month's partitions to be dropped instead of being deleted row by row (docs/partitioning.md).
   * 0: every expired row is deleted at the next sweep, as before partitioning.
   */
  RETENTION_LINGER_DAYS: Type.Integer({ minimum: 0, maximum: 62, default: 31 }),
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
  /**
   * carrier: ask the vendor routes' hlr service for the network serving each number now
   * (porting data) before answering from allocation data. Off by default: every carrier
   * check then costs a vendor HLR query.
   */
  CARRIER_NETWORK_LOOKUPS: Type.Boolean({ default: false }),
  /** E-mail probe: our public host name (EHLO) and return address (MAIL FROM). Unset = no e-mail route. */
  SMTP_HELO_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
  SMTP_MAIL_FROM: Type.String({ default: "" }),
  SMTP_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 25 }),
  SMTP_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  SMTP_STEP_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 20_000 }),
  SMTP_DEADLINE_MS: Type.Integer({ minimum: 200, maximum: 300_000, default: 40_000 }),
  SMTP_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  /** Politeness (docs/check-quality.md): simultaneous sessions per mail server address in this process. */
  SMTP_MAX_SESSIONS_PER_MX: Type.Integer({ minimum: 1, maximum: 50, default: 2 }),
  /** Recipients of one domain asked in one session (plus one catch-all probe). */
  SMTP_MAX_RCPTS_PER_SESSION: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  /** No new session to a server for this long after it answered 421 (or 4xx before RCPT). */
  SMTP_MX_BACKOFF_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 120_000 }),
  /** Upgrade probe sessions with STARTTLS when offered (opportunistic, certificate not verified). */
  SMTP_STARTTLS: Type.Boolean({ default: true }),
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
  const problems: string[] = [];
  if (config.SMTP_ALLOW_PRIVATE_ADDRESSES && config.NODE_ENV === "production") {
    problems.push("SMTP_ALLOW_PRIVATE_ADDRESSES is for development and tests and cannot be set in production");
  }
  // Renewed at least twice before an attempt that cannot renew gives itself up (WORK_LEASE_MS - WORK_LEASE_RENEW_MS).
  if (config.WORK_LEASE_RENEW_MS * 3 > config.WORK_LEASE_MS) {
    problems.push(`WORK_LEASE_RENEW_MS (${config.WORK_LEASE_RENEW_MS}) must be at most a third of WORK_LEASE_MS (${config.WORK_LEASE_MS})`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
export type CheckWorkerConfig = ReturnType<typeof loadCheckWorkerConfig>;
