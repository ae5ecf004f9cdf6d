import pg from "pg";

/** Anything that runs SQL: the pool, or a client inside a transaction. */
export type Sql = Pick<pg.Pool, "query"> | pg.PoolClient;

export type Store = {
  /**
   * Every statement of the store runs here, as SQL in named functions. No process
   * builds a Prisma Client: none makes a query through one (the Prisma schema stays the
   * datamodel migrations are written from, and Prisma's CLI applies them).
   */
  pool: pg.Pool;
  /**
   * A pool on a read replica (DATABASE_REPLICA_URL), or null when none is set. Only
   * reads that tolerate lag may use it, and only through a rule that falls back to
   * `pool` (the gateway's ReplicaReads); nothing writes through it.
   */
  replica: pg.Pool | null;
  close(): Promise<void>;
};

/** int8 columns (money, counters) come back as bigint, never as a lossy float or string. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (value: string) => BigInt(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
} as pg.CustomTypesConfig;

/**
 * A pooled connection that Postgres cuts while it is checked out (a transaction in
 * progress; pg_terminate_backend, a failover) emits `error` with nobody listening —
 * the pool only listens while a connection is idle — and an unheard `error` ends the
 * process. Every connection gets a listener of its own: the cut fails the work that
 * was using it (retried like any transient failure), and the pool drops the dead
 * connection when it is released. `onConnectionLost` hears about it (a log line).
 *
 * `replicaUrl` adds a second pool on a read replica (`replica`), named
 * `<applicationName>-replica` in pg_stat_activity. It connects lazily: a replica that
 * is down does not stop the store from being created, and its connections give up
 * after 2 s (not 5) because every read on it has the primary to fall back to.
 */
export function createStore(options: {
  databaseUrl: string;
  poolSize?: number;
  applicationName?: string;
  onConnectionLost?: (err: Error) => void;
  replicaUrl?: string | undefined;
  replicaPoolSize?: number;
}): Store {
  const name = options.applicationName ?? "svc";
  const lost = options.onConnectionLost ?? (() => undefined);
  const pool = newPool({ url: options.databaseUrl, max: options.poolSize ?? 10, name, connectTimeoutMs: 5_000, lost });
  const replica = options.replicaUrl ? newPool({ url: options.replicaUrl, max: options.replicaPoolSize ?? 10, name: `${name}-replica`, connectTimeoutMs: 2_000, lost }) : null;
  return {
    pool,
    replica,
    async close() {
      await pool.end().catch(() => undefined);
      await replica?.end().catch(() => undefined);
    },
  };
}

function newPool(o: { url: string; max: number; name: string; connectTimeoutMs: number; lost: (err: Error) => void }): pg.Pool {
  const pool = new pg.Pool({
    connectionString: o.url,
    max: o.max,
    application_name: o.name,
    types,
    connectionTimeoutMillis: o.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", o.lost));
  return pool;
}

/** A WAL position (`16/B374D848`) as a number of bytes, comparable with another. */
export function parseLsn(lsn: string): bigint {
  const [hi, lo] = lsn.split("/");
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/** The primary's current WAL position: everything committed so far lies before it. */
export async function currentWalPosition(sql: Sql): Promise<bigint> {
  const { rows } = await sql.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`);
  return parseLsn(rows[0]!.lsn);
}

/**
 * How far a replica has replayed the primary's WAL; null when the server is not a
 * streaming standby (not in recovery: a copy, a logical replica), whose lag this
 * cannot measure.
 */
export async function replayedWalPosition(sql: Sql): Promise<bigint | null> {
  const { rows } = await sql.query<{ lsn: string | null }>(`SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END AS lsn`);
  const lsn = rows[0]?.lsn;
  return lsn ? parseLsn(lsn) : null;
}

/**
 * Opens a read-only REPEATABLE READ transaction on `client`: every statement until
 * endReadOnlySnapshot reads one snapshot (on a standby, one point in its replay).
 */
export async function beginReadOnlySnapshot(client: pg.PoolClient): Promise<void> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

/** Ends the transaction beginReadOnlySnapshot opened (nothing was written: this only closes it). */
export async function endReadOnlySnapshot(client: pg.PoolClient): Promise<void> {
  await client.query("COMMIT");
}

/**
 * A connection of its own (outside every pool) that LISTENs on `svc_cache`, where the
 * cache_invalidation and api_keys_notify_on_insert migrations announce changes to
 * keys, accounts and prices. Its listeners are attached before it connects:
 * `onNotification` hears each payload, `onLost` an error or the end of the
 * connection. Rejects (the connection closed) when it cannot connect or listen.
 * The connection stays usable for reads that must be ordered with the notifications.
 */
export async function listenForCacheInvalidations(options: {
  databaseUrl: string;
  applicationName: string;
  onNotification: (payload: string | undefined) => void;
  onLost: (client: pg.Client) => void;
}): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: options.databaseUrl, application_name: options.applicationName });
  client.on("notification", (msg) => options.onNotification(msg.payload));
  client.on("error", () => options.onLost(client));
  client.on("end", () => options.onLost(client));
  try {
    await client.connect();
    await client.query("LISTEN svc_cache");
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return client;
}

/** Runs `fn` in one transaction on one connection; rolls back on any error. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Resolves when the database answers a query; rejects with the driver's error (which says why) when it cannot. */
export async function pingDatabase(sql: Sql): Promise<void> {
  await sql.query("SELECT 1");
}

/** True when the database answers within `timeoutMs`. */
export async function databaseReachable(pool: pg.Pool, timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pingDatabase(pool),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * Readiness's own view of the database: one connection of its own (not one of the
 * pool's), so a pool busy with slow queries under load does not make a healthy
 * process look unready, and a probe never waits behind the pool's queue.
 * `check` rejects when Postgres does not answer `SELECT 1` within `timeoutMs`.
 */
export function createDatabaseProbe(options: { databaseUrl: string; applicationName?: string }): { check(timeoutMs: number): Promise<void>; close(): Promise<void> } {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: 1,
    application_name: `${options.applicationName ?? "svc"}-probe`,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 60_000,
  });
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  return {
    async check(timeoutMs) {
      if (!(await databaseReachable(pool, timeoutMs))) throw new Error("database unreachable");
    },
    async close() {
      await pool.end().catch(() => undefined);
    },
  };
}
