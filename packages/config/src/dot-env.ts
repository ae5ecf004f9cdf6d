import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

/**
 * What `.env.local` may set: the secrets `npm run up` generates (scripts/lib.mjs),
 * nothing else. Connection settings (DATABASE_URL, REDIS_URL, REDIS_PREFIX...)
 * come from the environment or the documented defaults only, so a file written
 * by one run cannot point a later shell at another database.
 */
export const DOT_ENV_SECRETS = ["KEY_HASH_SECRET", "CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "FLEET_MESSAGE_KEY"] as const;

/**
 * Loads the generated secrets from `.env.local` in the repository root (found
 * from `startDir` upwards) so local runs and the admin CLI share one set.
 * Variables already in the environment win, so containers and CI configure
 * purely by env; any other line in the file (older versions wrote
 * DATABASE_URL and REDIS_URL there) is ignored. Not named `.env`: Prisma's
 * generated client would load a `.env` on import, behind the service's back
 * (and past its configuration checks).
 */
export function loadDotEnv(startDir: string = process.cwd()): void {
  let dir = path.resolve(startDir);
  for (let i = 0; i < 6; i += 1) {
    const candidate = path.join(dir, ".env.local");
    if (existsSync(candidate)) {
      const values = parseEnv(readFileSync(candidate, "utf8"));
      for (const name of DOT_ENV_SECRETS) {
        const value = values[name];
        if (value && !process.env[name]) process.env[name] = value;
      }
      return;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}
