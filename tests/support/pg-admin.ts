import pg from "pg";

/** Connection to the server's maintenance database, for creating and dropping test databases. */
export function adminUrl(): string {
  return process.env.SVC_TEST_ADMIN_URL ?? process.env.TEST_DATABASE_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
}

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates database `to` as a copy of `from` (CREATE DATABASE … TEMPLATE). Postgres
 * refuses while any session is connected to `from` — another file cloning it at the
 * same instant, or a pool still closing — so it is tried again for a few seconds.
 */
export async function cloneDatabase(from: string, to: string): Promise<void> {
  await withAdmin(async (client) => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await client.query(`CREATE DATABASE "${to}" TEMPLATE "${from}"`);
        return;
      } catch (err) {
        if (attempt >= 30 || !/being accessed by other users/.test(String(err))) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
}

/**
 * The run's Redis: TEST_REDIS_URL, or the local server. With SVC_TEST_REDIS=cluster the
 * global setup points TEST_REDIS_URL at the run's local Redis Cluster, so every test
 * file and every service it starts uses the cluster. Read when called: the setup sets it.
 */
export function redisUrl(): string {
  return process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
}
