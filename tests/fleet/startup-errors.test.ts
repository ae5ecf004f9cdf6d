import { spawn } from "node:child_process";
import path from "node:path";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { databaseUrl, withAdmin } from "../support/pg-admin";
import type { ServiceName } from "../support/fleet";

const ROOT = path.resolve(__dirname, "..", "..");
const SERVICES: ServiceName[] = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"];
// Nothing listens on these ports; the passwords must never be printed.
const DEAD_POSTGRES = "postgresql://postgres:pg-Secret-7781@127.0.0.1:5999/x";
const DEAD_REDIS = "redis://:redis-Secret-5521@127.0.0.1:5998";

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

/** Starts a built service as a real process and waits for it to exit (it must, on its own). */
function run(name: ServiceName, extra: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "services", name, "dist", "main.js")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { LOG_LEVEL: "info", PORT: "0", ...extra }) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not exit on its own:\n${stdout}${stderr}`));
    }, 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe.each(SERVICES)("%s started with a dependency unreachable", (name) => {
  it("exits non-zero naming DATABASE_URL and Postgres' address, without the password", async () => {
    const res = await run(name, { DATABASE_URL: DEAD_POSTGRES });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`${name} failed to start: cannot reach Postgres at 127.0.0.1:5999 (DATABASE_URL): connect ECONNREFUSED\n`);
    expect(res.stdout + res.stderr).not.toContain("pg-Secret-7781");
  });

  it("exits non-zero naming REDIS_URL and Redis' address, without the password, at once", async () => {
    const started = Date.now();
    const res = await run(name, { REDIS_URL: DEAD_REDIS });
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`${name} failed to start: cannot reach Redis at 127.0.0.1:5998 (REDIS_URL): connect ECONNREFUSED\n`);
    expect(res.stdout + res.stderr).not.toContain("redis-Secret-5521");
    // Not after a silent 10 s wait for a server that refuses connections.
    expect(Date.now() - started).toBeLessThan(8_000);
  });

  it("exits non-zero naming REDIS_URL and every seed node of a Redis Cluster none of which answers, without the password", async () => {
    const res = await run(name, { REDIS_URL: "redis+cluster://:redis-Secret-5521@127.0.0.1:5998,127.0.0.1:5997" });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^${name} failed to start: cannot reach Redis at 127\\.0\\.0\\.1:5998,127\\.0\\.0\\.1:5997 \\(REDIS_URL\\): no cluster node answered \\(.+\\)\\n$`));
    expect(res.stdout + res.stderr).not.toContain("redis-Secret-5521");
  });
});

it("a gateway of several processes (WEB_CONCURRENCY) exits non-zero too, instead of replacing processes that cannot start", async () => {
  const res = await run("gateway", { DATABASE_URL: DEAD_POSTGRES, WEB_CONCURRENCY: "2" });
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("gateway failed to start: cannot reach Postgres at 127.0.0.1:5999 (DATABASE_URL): connect ECONNREFUSED");
  expect(res.stderr).not.toContain("starting another");
});

describe("npm run up's preflight (scripts/ensure-database.mjs)", () => {
  const database = () => `${new URL(env.databaseUrl).pathname.slice(1)}_up`;
  const preflight = (redisUrl: string) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, "scripts", "ensure-database.mjs")], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: databaseUrl(database()), REDIS_URL: redisUrl },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr.on("data", (d: Buffer) => (output += d.toString()));
      child.on("exit", (code) => resolve({ code, output }));
    });
  const created = () => withAdmin(async (c) => (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [database()])).rowCount === 1);

  it("refuses a malformed REDIS_URL naming the setting, not its value, and creates nothing", async () => {
    for (const bad of ["redis+cluster://:redis-Secret-5521@127.0.0.1:5998?x=1", "redis://:redis-Secret-5521@[127.0.0.1"]) {
      const { code, output } = await preflight(bad);
      expect(code).toBe(1);
      expect(output).toContain("REDIS_URL");
      expect(output).not.toContain("redis-Secret-5521");
    }
    expect(await created()).toBe(false);
  });

  it("names an unreachable cluster node by host:port, without the password, before creating the database", async () => {
    const { code, output } = await preflight("redis+cluster://:redis-Secret-5521@127.0.0.1:5998,127.0.0.1:5997");
    expect(code).toBe(1);
    expect(output).toContain("Cannot reach Redis at 127.0.0.1:5998");
    expect(output).not.toContain("redis-Secret-5521");
    expect(await created()).toBe(false);
  });
});
