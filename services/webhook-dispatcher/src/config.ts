import { commonEnv, loadConfig, Type, workerEnv } from "@svc/config";

export const Env = Type.Object({
  ...commonEnv,
  ...workerEnv(20),
});

export const loadServiceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(Env, env);
