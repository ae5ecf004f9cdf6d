import { deleteKeysUnder } from "./redis-keys";
import { REDIS_URL, withAdmin } from "./pg-admin";

/** Drops this run's databases and Redis keys. */
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
  await deleteKeysUnder(REDIS_URL, `t:${runId}`);
}
