import { commonEnv, loadConfig, Type, workerEnv } from "@svc/config";

export const CheckWorkerEnv = Type.Object({
  ...commonEnv,
  ...workerEnv(50),
  /** How often to sweep Postgres for work whose queue message was lost. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 2_000 }),
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
});

export const loadCheckWorkerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(CheckWorkerEnv, env);
export type CheckWorkerConfig = ReturnType<typeof loadCheckWorkerConfig>;
