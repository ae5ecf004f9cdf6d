import { commonEnv, ConfigError, loadConfig, opsEnv, Type, workerEnv } from "@svc/config";
import { sourceRoutesEnv } from "@svc/sources";

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
  /** The routes of the checks: vendors, the e-mail probe, DNS (the admin CLI's `doctor` reads the same). */
  ...sourceRoutesEnv,
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
