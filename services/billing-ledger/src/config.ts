import { commonEnv, loadConfig, Type, workerEnv } from "@svc/config";

export const Env = Type.Object({
  ...commonEnv,
  ...workerEnv(20),
  /** How often open reservations are checked for finished or abandoned work. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
});

export const loadServiceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(Env, env);
