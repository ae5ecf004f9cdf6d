import { existsSync } from "node:fs";
import path from "node:path";

/**
 * Loads `.env.local` from the repository root (written by `npm run up` with generated
 * secrets) so local runs and the admin CLI share one set of secrets. Variables
 * already in the environment win, so containers and CI configure purely by env.
 * Not named `.env`: Prisma's generated client would load a `.env` on import, behind
 * the service's back (and past its configuration checks).
 */
export function loadDotEnv(startDir: string = process.cwd()): void {
  let dir = path.resolve(startDir);
  for (let i = 0; i < 6; i += 1) {
    const candidate = path.join(dir, ".env.local");
    if (existsSync(candidate)) {
      process.loadEnvFile(candidate);
      return;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}
