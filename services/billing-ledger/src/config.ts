import { commonEnv, loadConfig, Type } from "@svc/config";

export const Env = Type.Object({
  ...commonEnv,
  CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
});

export const loadServiceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(Env, env);
