import { commonEnv, loadConfig, Type } from "@svc/config";
import { sourceRoutesEnv } from "@svc/sources";

export const AdminEnv = Type.Object({
  DATABASE_URL: commonEnv.DATABASE_URL,
  /** Must equal the gateway's, or created keys will not authenticate. */
  KEY_HASH_SECRET: Type.String({ minLength: 32 }),
  /** The check-worker's route settings, read by `doctor` (set them as the check-workers have them). */
  ...sourceRoutesEnv,
});

export const loadAdminConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(AdminEnv, env);
