import path from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";

/**
 * Works around prisma/orm#27403: with adapter-pg 6.x the migration engine cannot
 * deserialise Postgres `name` columns (type oid 19). Report them as `text` (25).
 * pg.Pool calls `query` with callbacks, so both call styles are patched.
 */
type QueryResultLike = { fields?: Array<{ dataTypeID: number }> } | undefined;
const nameAsText = <R extends QueryResultLike>(result: R): R => {
  for (const f of result?.fields ?? []) if (f.dataTypeID === 19) f.dataTypeID = 25;
  return result;
};

class NameAsTextClient extends pg.Client {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const cbIndex = args.findIndex((a) => typeof a === "function");
    if (cbIndex >= 0) {
      const cb = args[cbIndex];
      args[cbIndex] = (err: Error, res: QueryResultLike) => cb(err, nameAsText(res));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const config = args[0];
    if (config && typeof config === "object" && typeof config.callback === "function") {
      const cb = config.callback;
      config.callback = (err: Error, res: QueryResultLike) => cb(err, nameAsText(res));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args) as Promise<QueryResultLike> | undefined;
    return result && typeof result.then === "function" ? result.then(nameAsText) : result;
  }
}

/**
 * adapter-pg 6.x runs a migration script by splitting it on every ";", which breaks
 * PL/pgSQL bodies and string literals. Send the script whole instead: one simple
 * query, which Postgres runs as a single implicit transaction.
 */
type Queryable = { client: { query(sql: string): Promise<unknown> }; onError(err: unknown): never };
class WholeScriptPg extends PrismaPg {
  override async connect() {
    const adapter = await super.connect();
    const queryable = Object.getPrototypeOf(adapter) as { executeScript(this: Queryable, script: string): Promise<void> };
    queryable.executeScript = async function executeScript(this: Queryable, script: string) {
      try {
        await this.client.query(script);
      } catch (err) {
        this.onError(err);
      }
    };
    return adapter;
  }
}

/**
 * The CLI runs on the JavaScript/WebAssembly engines through the pg driver adapter,
 * so `migrate deploy` and `migrate status` need no native engine download.
 */
export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  async adapter() {
    const connectionString = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/svc_validate";
    return new WholeScriptPg(new pg.Pool({ connectionString, Client: NameAsTextClient, allowExitOnIdle: true, idleTimeoutMillis: 100 }));
  },
});
