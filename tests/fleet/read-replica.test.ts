import { spawnSync } from "node:child_process";
import path from "node:path";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { accountWithKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { freePort, probe, scrape } from "../observability/support";

/**
 * The built gateway as a real process with DATABASE_REPLICA_URL pointing where
 * nothing answers: it starts, stays ready (the replica is not a dependency), serves
 * reads from the primary, says so once in its log without the URL's password, and
 * counts the reads by the database that answered them.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SECRET = "replica-Secret-4417";

let env: TestEnv;
let store: Store;
let gateway: RunningService;
let ops: number;
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
  key = (await accountWithKey(store, env.keyHashSecret)).key;
  ops = await freePort();
  const dead = await freePort();
  gateway = await startService("gateway", env, { PORT: "0", METRICS_PORT: String(ops), METRICS_HOST: "127.0.0.1", DATABASE_REPLICA_URL: `postgresql://svc:${SECRET}@127.0.0.1:${dead}/replica` });
});

afterAll(async () => {
  await gateway?.stop();
  await store?.close();
});

it("starts, is ready, answers reads from the primary and counts them", async () => {
  expect((await probe(ops, "/readyz")).status).toBe(200);
  const auth = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
  const created = await fetch(`${gateway.url}/v1/lookup`, { method: "POST", headers: auth, body: JSON.stringify({ numbers: ["+12025550100"], checks: ["spam"] }) });
  const id = ((await created.json()) as { id: string }).id;
  const read = await fetch(`${gateway.url}/v1/lookups/${id}`, { headers: auth });
  expect({ status: read.status, lookup: ((await read.json()) as { status: string }).status }).toEqual({ status: 200, lookup: "completed" });
  const today = new Date().toISOString().slice(0, 10);
  expect((await fetch(`${gateway.url}/v1/usage?from=${today}&to=${today}`, { headers: auth })).status).toBe(200);

  const m = await scrape(ops);
  expect(m.sum("svc_db_reads_total", { read: "lookup", target: "primary" })).toBe(1);
  expect(m.sum("svc_db_reads_total", { read: "usage", target: "primary" })).toBe(1);
  expect(m.sum("svc_db_reads_total", { target: "replica" })).toBe(0);
  expect(m.sum("svc_db_replica_fallbacks_total", { read: "lookup", reason: "unavailable" })).toBe(1);
  expect(m.has("svc_db_replica_usable")).toBe(true);
  expect(m.sum("svc_db_replica_usable")).toBe(0);
  expect(gateway.output()).toContain("read replica unreachable; reads go to the primary until it answers");
  expect(gateway.output()).not.toContain(SECRET);
});

it("refuses a DATABASE_REPLICA_URL that is not a Postgres URL, naming the setting and not the value", () => {
  const res = spawnSync(process.execPath, [path.join(ROOT, "services", "gateway", "dist", "main.js")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { PORT: "0", DATABASE_REPLICA_URL: `mysql://svc:${SECRET}@127.0.0.1/replica` }) },
    encoding: "utf8",
    timeout: 20_000,
  });
  expect(res.status).toBe(1);
  expect(res.stderr).toContain("DATABASE_REPLICA_URL");
  expect(res.stdout + res.stderr).not.toContain(SECRET);
});
