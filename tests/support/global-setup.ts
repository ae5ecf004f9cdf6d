import { spawnSync } from "node:child_process";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { applyServiceRoles, DEFAULT_SERVICE_ROLES, SERVICES } from "../../packages/store/src/roles";
import { databaseUrl, redisUrl, withAdmin } from "./pg-admin";
import { runClusterDir, startCluster, stopStaleClusters } from "./redis-cluster";
import { createRunRedisUsers } from "./redis-users";

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
  // Every service's own role and grants, as scripts/db-deploy.mjs makes them after a migration; clones inherit them.
  const owner = new pg.Client({ connectionString: databaseUrl(template) });
  await owner.connect();
  try {
    await applyServiceRoles(owner, Object.fromEntries(SERVICES.map((s) => [s, { role: DEFAULT_SERVICE_ROLES[s] }])) as Parameters<typeof applyServiceRoles>[1]);
  } finally {
    await owner.end();
  }
  stopStaleClusters(6 * 3600 * 1000);
  process.env.SVC_TEST_RUN_ID = runId;
  process.env.SVC_TEST_TEMPLATE_DB = template;
  // SVC_TEST_REDIS=cluster: the whole run (test files and the services they start) on a
  // local Redis Cluster of its own instead of the one Redis (scripts/test-cluster.mjs).
  if (process.env.SVC_TEST_REDIS === "cluster") process.env.TEST_REDIS_URL = startCluster(runClusterDir(runId));
  else if (process.env.SVC_TEST_REDIS && process.env.SVC_TEST_REDIS !== "single") throw new Error("SVC_TEST_REDIS must be single or cluster");
  // Services started on the run's Redis connect as their own ACL users (tests/support/env.ts).
  process.env.SVC_TEST_REDIS_PASSWORD = randomBytes(24).toString("hex");
  await createRunRedisUsers(runId, redisUrl(), process.env.SVC_TEST_REDIS_PASSWORD);
}
