import { commonEnv, loadConfig, Type } from "@svc/config";

export const AdminEnv = Type.Object({
  DATABASE_URL: commonEnv.DATABASE_URL,
  /** Must equal the gateway's, or created keys will not authenticate. */
  KEY_HASH_SECRET: Type.String({ minLength: 32 }),
});

export const loadAdminConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(AdminEnv, env);
