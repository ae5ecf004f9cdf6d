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
    return new PrismaPg(new pg.Pool({ connectionString, Client: NameAsTextClient, allowExitOnIdle: true, idleTimeoutMillis: 100 }));
  },
});
