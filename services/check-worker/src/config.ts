import { commonEnv, loadConfig, Type } from "@svc/config";

export const CheckWorkerEnv = Type.Object({
  ...commonEnv,
  /** Jobs processed at once by this replica (each mostly waits on data sources). */
  CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
  /** How often to sweep for pending test lookups whose completion message was lost. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 2_000 }),
});

export const loadCheckWorkerConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(CheckWorkerEnv, env);
