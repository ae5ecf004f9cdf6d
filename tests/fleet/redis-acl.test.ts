import { spawnSync } from "node:child_process";
import Redis from "ioredis";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRedis, queuePrefix, QUEUES, waitForRedis, type RedisClient } from "@svc/queues";
import { routesKey } from "@svc/sources";
import type { ServiceName } from "@svc/store";
import request from "supertest";
import { createStore } from "@svc/store";
import { createTestEnv, serviceRedisUrl, type TestEnv } from "../support/env";
import { accountWithKey, bearer } from "../support/fixtures";
import { startService } from "../support/fleet";
import { freePort, PrivateRedis } from "../observability/support";

/**
 * Each service's Redis ACL user (packages/queues/src/acl.ts), as the fleet tests run
 * them on the run's Redis (one server, or every node of the cluster leg): what a
 * service may do works, what it may not is refused by Redis itself (NOPERM) — so a
 * compromised billing-ledger cannot enqueue checks or forge notices, and no service
 * can flush, list or reconfigure Redis, or touch another fleet's keys.
 */
const ROOT = path.resolve(__dirname, "..", "..");
let env: TestEnv;
const clients: RedisClient[] = [];

beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => (c.status === "ready" ? c.quit().catch(() => c.disconnect()) : c.status === "end" ? undefined : c.disconnect())));
});

async function as(service: ServiceName): Promise<RedisClient> {
  const url = serviceRedisUrl(env.redisUrl, service);
  expect(url).not.toBe(env.redisUrl); // the run made the users: the setup's work is under test too
  const client = createRedis(url, "producer", `acl-test-${service}`);
  clients.push(client);
  await waitForRedis(client);
  return client;
}

/** "allowed", or Redis' refusal (NOPERM) — anything else fails the test. */
async function attempt(run: () => Promise<unknown>): Promise<"allowed" | "refused"> {
  try {
    await run();
    return "allowed";
  } catch (err) {
    if (/NOPERM/.test(String(err))) return "refused";
    throw err;
  }
}

const key = (queue: keyof typeof QUEUES) => `${queuePrefix(env.redisPrefix, QUEUES[queue])}:acl-probe`;
const channel = () => `${env.redisPrefix}:completed:acl-probe`;

describe("every service's user", () => {
  it.each(["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const)("%s: no FLUSHALL, KEYS, SCAN, CONFIG, ACL, MONITOR, CLIENT LIST, SLOWLOG, SCRIPT FLUSH, PUBSUB, nor another fleet's keys", async (service) => {
    const r = await as(service);
    expect(await attempt(() => r.call("FLUSHALL"))).toBe("refused");
    expect(await attempt(() => r.call("KEYS", "*"))).toBe("refused");
    expect(await attempt(() => r.call("CONFIG", "GET", "*"))).toBe("refused");
    expect(await attempt(() => r.call("ACL", "LIST"))).toBe("refused");
    expect(await attempt(() => r.call("CLIENT", "LIST"))).toBe("refused");
    expect(await attempt(() => r.call("SLOWLOG", "GET"))).toBe("refused");
    // Nor list what other fleets have: key names, channel names.
    expect(await attempt(() => r.call("SCAN", "0"))).toBe("refused");
    expect(await attempt(() => r.call("RANDOMKEY"))).toBe("refused");
    expect(await attempt(() => r.call("PUBSUB", "SHARDCHANNELS"))).toBe("refused");
    expect(await attempt(() => r.call("SCRIPT", "FLUSH"))).toBe("refused");
    expect(await attempt(() => r.call("MONITOR"))).toBe("refused");
    expect(await attempt(() => r.set("{another-fleet:bull:checks}:checks:wait", "x"))).toBe("refused");
    expect(await attempt(() => r.get("svc:rl:key:anything"))).toBe("refused");
  });
});

describe("queues and channels per service", () => {
  it("the billing-ledger takes settlements and sends events, but cannot enqueue checks or send notices", async () => {
    const r = await as("billing-ledger");
    expect(await attempt(() => r.set(key("settlements"), "x", "PX", 1000))).toBe("allowed");
    expect(await attempt(() => r.set(key("webhooks"), "x", "PX", 1000))).toBe("allowed");
    expect(await attempt(() => r.set(key("checks"), "x"))).toBe("refused");
    expect(await attempt(() => r.spublish(channel(), "x"))).toBe("refused");
  });

  it("the webhook-dispatcher reaches its own queue only", async () => {
    const r = await as("webhook-dispatcher");
    expect(await attempt(() => r.set(key("webhooks"), "x", "PX", 1000))).toBe("allowed");
    expect(await attempt(() => r.get(key("settlements")))).toBe("refused");
    expect(await attempt(() => r.get(key("checks")))).toBe("refused");
    expect(await attempt(() => r.get(routesKey(env.redisPrefix, "whatsapp")))).toBe("refused");
  });

  it("the gateway reads the data sources' routes but cannot change them; the check-worker can, but not the gateway's rate limits", async () => {
    const gw = await as("gateway");
    expect(await attempt(() => gw.get(routesKey(env.redisPrefix, "whatsapp")))).toBe("allowed");
    expect(await attempt(() => gw.set(routesKey(env.redisPrefix, "whatsapp"), "[]"))).toBe("refused");
    expect(await attempt(() => gw.set(`${env.redisPrefix}:rl:key:acl-probe`, "1", "PX", 1000))).toBe("allowed");
    const worker = await as("check-worker");
    expect(await attempt(() => worker.set(routesKey(env.redisPrefix, "acl-probe"), "[]", "PX", 1000))).toBe("allowed");
    expect(await attempt(() => worker.set(`${env.redisPrefix}:rl:key:acl-probe`, "0"))).toBe("refused");
    expect(await attempt(() => worker.spublish(channel(), "x"))).toBe("allowed");
  });
});

describe("the services' own scripts, as their users", () => {
  it("the gateway's per-key limiter answers 429 past the burst (its script calls TIME: were it refused, the limiter would let everything through)", async () => {
    const store = createStore({ databaseUrl: env.databaseUrl });
    const gateway = await startService("gateway", env, { PORT: "0" });
    try {
      const { key } = await accountWithKey(store, env.keyHashSecret);
      const statuses = await Promise.all(
        Array.from({ length: 40 }, () => request(gateway.url).post("/v1/lookup").set(bearer(key)).send({ numbers: ["+12025550101"], checks: ["spam"] }).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
      expect(gateway.output()).not.toMatch(/rate limiter unavailable|NOPERM|can't run this command/);
    } finally {
      await gateway.stop();
      await store.close();
    }
  });
});

describe("scripts/redis-acl.mjs", () => {
  const passwords = {
    GATEWAY_REDIS_PASSWORD: "gateway-Redis-Secret-01",
    CHECK_WORKER_REDIS_PASSWORD: "worker-Redis-Secret-02",
    BILLING_LEDGER_REDIS_PASSWORD: "ledger-Redis-Secret-03",
    WEBHOOK_DISPATCHER_REDIS_PASSWORD: "dispatcher-Redis-Secret-04",
    ADMIN_REDIS_PASSWORD: "admin-Redis-Secret-05",
  };
  const script = (args: string[], extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [path.join(ROOT, "scripts", "redis-acl.mjs"), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", REDIS_PREFIX: "acltest", ...passwords, ...extra }, encoding: "utf8" });
  let dir: string;
  let redis: PrivateRedis;
  /** A connection to the private Redis as `userinfo` (`user:password@`, or "" for none); rejects when AUTH is refused. */
  async function connect(userinfo: string): Promise<Redis> {
    const client = new Redis(redis.url.replace("redis://", `redis://${userinfo}`), { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let refused: Error | undefined;
    client.on("error", (err: Error) => (refused ??= err));
    clients.push(client as unknown as RedisClient);
    // ioredis closes the connection when AUTH is refused: the reason is the error it emitted.
    await client.connect().catch((err: Error) => {
      throw refused ?? err;
    });
    return client;
  }
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "svc-acl-"));
  });
  afterAll(async () => {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes an ACL file a Redis starts from: the default user off, each service in with its password only, no password in clear", async () => {
    const file = path.join(dir, "users.acl");
    const res = script(["--out", file]);
    expect(res.status).toBe(0);
    const text = readFileSync(file, "utf8");
    for (const secret of Object.values(passwords)) expect(text + res.stdout + res.stderr).not.toContain(secret);
    redis = new PrivateRedis(await freePort(), ["--aclfile", file]);
    await redis.start();
    await expect(connect("")).rejects.toThrow(/NOAUTH/);
    await expect(connect("acltest-gateway:not-the-password@")).rejects.toThrow(/WRONGPASS/);
    const gw = await connect(`acltest-gateway:${passwords.GATEWAY_REDIS_PASSWORD}@`);
    expect(await gw.ping()).toBe("PONG");
    expect(await attempt(() => gw.set("{acltest:bull:checks}:checks:x", "1"))).toBe("allowed");
    expect(await attempt(() => gw.set("{svc:bull:checks}:checks:x", "1"))).toBe("refused");
  });

  it("applies the same users to a running Redis as an operator (--apply), on the admin user's URL", async () => {
    const res = script(["--apply"], { REDIS_URL: redis.url.replace("redis://", `redis://acltest-admin:${passwords.ADMIN_REDIS_PASSWORD}@`), BILLING_LEDGER_REDIS_PASSWORD: "ledger-Rotated-Secret-33" });
    expect(res.status).toBe(0);
    expect(res.stdout + res.stderr).not.toContain("Secret");
    // The ledger's password was rotated: the new one works, the old one no longer does.
    expect(await (await connect("acltest-billing-ledger:ledger-Rotated-Secret-33@")).ping()).toBe("PONG");
    await expect(connect(`acltest-billing-ledger:${passwords.BILLING_LEDGER_REDIS_PASSWORD}@`)).rejects.toThrow(/WRONGPASS/);
  });

  it("refuses to write users without a password for each, naming the setting", () => {
    const res = script([], { WEBHOOK_DISPATCHER_REDIS_PASSWORD: "" });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("WEBHOOK_DISPATCHER_REDIS_PASSWORD is not set");
  });
});
