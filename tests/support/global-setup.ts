import { spawnSync } from "node:child_process";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { databaseUrl, withAdmin } from "./pg-admin";
import { runClusterDir, startCluster, stopStaleClusters } from "./redis-cluster";

/**
 * Once per jest run: migrate a template database with the real migration command
 * (`prisma migrate deploy`), so every test file can clone its own database from it
 * in milliseconds. Leftovers of crashed runs older than six hours are dropped.
 */
export default async function globalSetup(): Promise<void> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const template = `svc_tpl_${runId}`;
  await withAdmin(async (client) => {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname ~ '^svc_(tpl|t)_'`);
    const cutoff = Date.now() - 6 * 3600 * 1000;
    for (const { datname } of rows) {
      const stamp = /^svc_(?:tpl|t)_([0-9a-z]{8,9})/.exec(datname)?.[1];
      if (stamp && parseInt(stamp.slice(0, 8), 36) < cutoff) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await client.query(`CREATE DATABASE "${template}"`);
  });
  const root = path.resolve(__dirname, "..", "..");
  const migrate = spawnSync(process.execPath, [path.join(root, "scripts", "prisma.mjs"), "migrate", "deploy"], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl(template) },
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`migrations failed on the test template:\n${migrate.stdout}\n${migrate.stderr}`);
  stopStaleClusters(6 * 3600 * 1000);
  process.env.SVC_TEST_RUN_ID = runId;
  process.env.SVC_TEST_TEMPLATE_DB = template;
  // SVC_TEST_REDIS=cluster: the whole run (test files and the services they start) on a
  // local Redis Cluster of its own instead of the one Redis (scripts/test-cluster.mjs).
  if (process.env.SVC_TEST_REDIS === "cluster") process.env.TEST_REDIS_URL = startCluster(runClusterDir(runId));
  else if (process.env.SVC_TEST_REDIS && process.env.SVC_TEST_REDIS !== "single") throw new Error("SVC_TEST_REDIS must be single or cluster");
}
