import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";

/** Anything that runs SQL: the pool, or a client inside a transaction. */
export type Sql = Pick<pg.Pool, "query"> | pg.PoolClient;

export type Store = {
  /** Raw pg for hot paths and bulk writes. */
  pool: pg.Pool;
  /** The generated Prisma client (same pool, via the pg driver adapter). */
  prisma: PrismaClient;
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
 */
export function createStore(options: { databaseUrl: string; poolSize?: number; applicationName?: string; onConnectionLost?: (err: Error) => void }): Store {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolSize ?? 10,
    application_name: options.applicationName ?? "svc",
    types,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on("error", () => undefined);
  const lost = options.onConnectionLost ?? (() => undefined);
  pool.on("connect", (client) => client.on("error", lost));
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    pool,
    prisma,
    async close() {
      await prisma.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
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

/** True when the database answers within `timeoutMs`. */
export async function databaseReachable(pool: pg.Pool, timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      pool.query("SELECT 1"),
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
