// What several bench scripts need before and while they measure: a migrated bench
// database, and the CPU time of the processes they start.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const pg = require("pg");

/**
 * Creates the database of `databaseUrl` when missing and applies the migrations of the
 * checkout at `root` (`node scripts/prisma.mjs migrate deploy`); throws when they fail.
 */
export async function ensureMigratedDatabase(databaseUrl, root) {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: "/postgres" }).toString() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
  } finally {
    await admin.end();
  }
  const r = spawnSync(process.execPath, [path.join(root, "scripts/prisma.mjs"), "migrate", "deploy"], { cwd: root, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error("migrate deploy failed");
}

/** CPU seconds (user + system) used so far by `pid` and its child processes (Linux /proc, USER_HZ 100). */
export function cpuSeconds(pid) {
  const read = (p) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / 100 };
    } catch {
      return null;
    }
  };
  let total = read(pid)?.cpu ?? 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = read(name);
    if (s && s.ppid === pid) total += s.cpu;
  }
  return total;
}
