import { spawnSync } from "node:child_process";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService, type ServiceName } from "../support/fleet";
import { freePort, PostgresRelay, PrivateRedis, probe, until } from "./support";

/**
 * Liveness and readiness on the operations port, against real service processes:
 * readiness follows Postgres and Redis (made unreachable through a relay the test
 * cuts, and a redis-server of the test's own that it stops), liveness does not;
 * the gateway stops being ready the moment SIGTERM arrives and keeps serving for
 * DRAIN_DELAY_MS before it closes.
 */
const ROOT = path.resolve(__dirname, "..", "..");
let env: TestEnv;
let store: Store;
let key: TestKey;
const running: RunningService[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  key = await accountWithKey(store, env.keyHashSecret);
});
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await store.close();
});

async function start(name: ServiceName, extra: Record<string, string>): Promise<{ svc: RunningService; ops: number }> {
  const ops = await freePort();
  const svc = await startService(name, env, { METRICS_PORT: String(ops), METRICS_HOST: "127.0.0.1", ...(name === "gateway" ? { PORT: "0" } : {}), ...extra });
  running.push(svc);
  return { svc, ops };
}

const readyState = async (port: number) => {
  const r = await probe(port, "/readyz");
  return { status: r.status, body: JSON.parse(r.body) as { status: string; checks?: Record<string, string> } };
};

describe("readiness follows Redis", () => {
  it.each(["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const)("%s: 503 naming redis while its Redis is down, 200 again when it is back; /livez stays 200", async (name) => {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    try {
      const { svc, ops } = await start(name, { REDIS_URL: redis.url });
      expect(await readyState(ops)).toEqual({ status: 200, body: { status: "ready", checks: expect.objectContaining({ postgres: "ok", redis: "ok", running: "ok" }) } });
      await redis.stop();
      await until("not ready", async () => (await probe(ops, "/readyz")).status === 503, 5_000);
      const down = await readyState(ops);
      expect(down.body.status).toBe("not_ready");
      expect(down.body.checks?.redis).not.toBe("ok");
      expect(down.body.checks?.postgres).toBe("ok");
      expect((await probe(ops, "/livez")).status).toBe(200);
      if (name === "gateway") {
        // The public health endpoint keeps its documented meaning: the database answers.
        expect((await request(svc.url).get("/v1/health")).status).toBe(200);
      }
      await redis.start();
      await until("ready again", async () => (await probe(ops, "/readyz")).status === 200, 15_000);
      await svc.stop();
    } finally {
      await redis.stop();
    }
  }, 60_000);
});

describe("readiness follows Postgres", () => {
  it.each(["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const)("%s: 503 naming postgres while the database is unreachable, 200 again when it is back", async (name) => {
    const target = new URL(env.databaseUrl);
    const relay = new PostgresRelay({ host: target.hostname, port: Number(target.port || 5432) });
    await relay.start();
    try {
      const { svc, ops } = await start(name, { DATABASE_URL: relay.urlFor(env.databaseUrl) });
      expect((await readyState(ops)).status).toBe(200);
      await relay.cut();
      await until("not ready", async () => (await probe(ops, "/readyz")).status === 503, 5_000);
      const down = await readyState(ops);
      expect(down.body.checks?.postgres).not.toBe("ok");
      expect(down.body.checks?.redis).toBe("ok");
      // Nothing about the address or the error leaves the process.
      expect(JSON.stringify(down.body)).not.toMatch(/127\.0\.0\.1|ECONN|\d{4,}/);
      expect((await probe(ops, "/livez")).status).toBe(200);
      await relay.restore();
      await until("ready again", async () => (await probe(ops, "/readyz")).status === 200, 10_000);
      await svc.stop();
    } finally {
      await relay.cut();
    }
  }, 60_000);
});

describe("the gateway's drain on SIGTERM", () => {
  it("turns /readyz 503 at once, keeps answering requests for DRAIN_DELAY_MS, then closes and exits 0", async () => {
    const { svc, ops } = await start("gateway", { DRAIN_DELAY_MS: "2000" });
    expect((await probe(ops, "/readyz")).status).toBe(200);
    const signalled = Date.now();
    svc.child.kill("SIGTERM");
    await until("not ready", async () => (await probe(ops, "/readyz")).status === 503, 500);
    expect(Date.now() - signalled).toBeLessThan(500);
    expect(JSON.parse((await probe(ops, "/readyz")).body)).toEqual({ status: "draining" });
    // Still serving, new connections included, well into the delay.
    await new Promise((r) => setTimeout(r, 1_000));
    const during = await request(svc.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: ["+12025550101"], checks: ["spam"] });
    expect(during.status).toBe(200);
    expect((await probe(ops, "/livez")).status).toBe(200);
    expect(await svc.exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(2_000);
    expect(svc.output()).toMatch(/"step":"drain delay"/);
    await expect(request(svc.url).get("/v1/health")).rejects.toThrow();
  }, 30_000);

  it.each(["check-worker", "billing-ledger", "webhook-dispatcher"] as const)("%s reports draining from SIGTERM on and exits 0", async (name) => {
    const { svc, ops } = await start(name, {});
    expect((await probe(ops, "/readyz")).status).toBe(200);
    svc.child.kill("SIGTERM");
    // Until the process is gone the port answers 503; afterwards nothing answers.
    const after = await probe(ops, "/readyz").catch(() => null);
    if (after) expect(after.status).toBe(503);
    expect(await svc.exited).toBe(0);
  }, 30_000);
});

describe("the operations port's configuration", () => {
  const run = (service: ServiceName, extra: Record<string, string>) =>
    spawnSync(process.execPath, [path.join(ROOT, "services", service, "dist", "main.js")], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "", ...serviceEnv(env), ...extra },
      encoding: "utf8",
      timeout: 20_000,
    });

  it("refuses to start when METRICS_PORT is taken, naming the setting", async () => {
    const { ops } = await start("billing-ledger", {});
    const clash = run("check-worker", { METRICS_PORT: String(ops), METRICS_HOST: "127.0.0.1" });
    expect(clash.status).toBe(1);
    expect(clash.stderr).toMatch(/METRICS_PORT \d+ is already in use/);
  }, 30_000);

  it("validates METRICS_PORT and DRAIN_DELAY_MS at start-up", () => {
    const bad = run("webhook-dispatcher", { METRICS_PORT: "70000" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("METRICS_PORT");
    const drain = run("gateway", { DRAIN_DELAY_MS: "20000", SHUTDOWN_TIMEOUT_MS: "10000" });
    expect(drain.status).toBe(1);
    expect(drain.stderr).toContain("DRAIN_DELAY_MS must be less than SHUTDOWN_TIMEOUT_MS");
  }, 30_000);

  it("answers only its three paths, to GET and HEAD", async () => {
    const { ops } = await start("billing-ledger", {});
    expect((await fetch(`http://127.0.0.1:${ops}/v1/health`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${ops}/metrics`, { method: "POST", body: "x" })).status).toBe(405);
    const head = await fetch(`http://127.0.0.1:${ops}/livez`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  }, 30_000);
});

describe("where the operations port listens", () => {
  /** An address of this machine that is not loopback: what another host (or pod) would connect to. */
  const outward = () => {
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === "IPv4")?.address;
    if (!address) throw new Error("this machine has no non-loopback IPv4 address to test with");
    return address;
  };
  const reachable = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host, () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });

  it("is loopback only unless METRICS_HOST says otherwise (it has no authentication, and /metrics shows money totals)", async () => {
    const closed = await freePort();
    running.push(await startService("billing-ledger", env, { METRICS_PORT: String(closed) }));
    expect((await probe(closed, "/livez")).status).toBe(200);
    expect(await reachable(outward(), closed)).toBe(false);
    // The deployments' setting (behind their network rules) opens it: the check above can fail.
    const open = await freePort();
    running.push(await startService("billing-ledger", env, { METRICS_PORT: String(open), METRICS_HOST: "0.0.0.0" }));
    expect(await reachable(outward(), open)).toBe(true);
  });
});
