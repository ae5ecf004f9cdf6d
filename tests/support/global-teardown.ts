import { deleteKeysUnder } from "./redis-keys";
import { redisUrl, withAdmin } from "./pg-admin";
import { runClusterDir, stopCluster } from "./redis-cluster";
import { deleteRunRedisUsers } from "./redis-users";

/** Drops this run's databases and Redis keys, and stops its local Redis Cluster. */
export default async function globalTeardown(): Promise<void> {
  const runId = process.env.SVC_TEST_RUN_ID;
  if (!runId) return;
  await withAdmin(async (client) => {
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname LIKE $2`, [
      `svc_t_${runId}_%`,
      `svc_tpl_${runId}`,
    ]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
  const clusterMode = process.env.SVC_TEST_REDIS === "cluster";
  if (!clusterMode) await deleteKeysUnder(redisUrl(), `t:${runId}`);
  await deleteRunRedisUsers(runId, redisUrl()).catch(() => undefined);
  // The run's cluster (started by the setup, or by the first test that needed one) goes whole.
  stopCluster(runClusterDir(runId));
}
