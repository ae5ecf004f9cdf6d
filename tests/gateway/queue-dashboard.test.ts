import { spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { Queue, Worker } from "bullmq";
import { createRedis, queuePrefix, type RedisClient } from "@svc/queues";
import request from "supertest";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";

/**
 * The queue dashboard (Bull Board) on the gateway's operator-only port: its own
 * credentials, never on the public API port, read-only unless told otherwise, and
 * nothing but the catalog's ids shown from a message.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const PASSWORD = "correct-horse-battery-staple-42";
const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });
const OPERATOR = basic("operator", PASSWORD);
// Identifiers a message must never carry, and the dashboard must never show if one did.
const PHONE = "+12025550199";
const EMAIL = "jane.doe@private-mail.example";

let env: TestEnv;
let store: Store;
let key: TestKey;
let redis: RedisClient;
let gateway: RunningService;
let dashboard: string;

/** A port free right now (the dashboard's must be fixed: 0 means off). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  key = await accountWithKey(store, env.keyHashSecret);
  redis = createRedis(env.redisUrl, "worker", "queue-dashboard-test");

  // A message that breaks the catalog's rule (ids only), failed with identifiers in its error.
  const connection = redis;
  const workerRedis = redis.duplicate();
  const settlements = new Queue("settlements", { connection, prefix: queuePrefix(env.redisPrefix, "settlements") });
  await settlements.add("settle.reservation", { reservationId: "rsv_abcdefgh1234", note: `call ${PHONE} or write to ${EMAIL}` }, { jobId: "rogue-1", attempts: 1 });
  const failing = new Worker(
    "settlements",
    async () => {
      throw new Error(`could not settle for ${EMAIL} (${PHONE})`);
    },
    { connection: workerRedis, prefix: queuePrefix(env.redisPrefix, "settlements"), autorun: false },
  );
  const failed = new Promise<void>((resolve) => failing.on("failed", () => resolve()));
  void failing.run();
  await failed;
  await failing.close();
  workerRedis.disconnect();
  await settlements.close();

  const port = await freePort();
  gateway = await startService("gateway", env, { PORT: "0", QUEUE_DASHBOARD_PORT: String(port), QUEUE_DASHBOARD_PASSWORD: PASSWORD });
  dashboard = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await gateway?.stop();
  redis?.disconnect();
  await store?.close();
});

describe("the queue dashboard's door", () => {
  it("answers on its own port with the right credentials", async () => {
    expect(gateway.output()).toMatch(/queue dashboard listening/);
    const page = await request(dashboard).get("/queues/").set(OPERATOR);
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/html/);
    const api = await request(dashboard).get("/queues/api/queues").set(OPERATOR);
    expect(api.status).toBe(200);
    expect((api.body.queues as Array<{ name: string }>).map((q) => q.name).sort()).toEqual(["checks", "settlements", "webhooks"]);
  });

  it("answers 401 without credentials, or with wrong ones, and logs no password", async () => {
    for (const headers of [{}, basic("operator", "wrong-password-wrong-password"), basic("admin", PASSWORD), { Authorization: `Bearer ${PASSWORD}` }]) {
      for (const p of ["/queues/", "/queues/api/queues", "/queues/api/queues/settlements/rogue-1"]) {
        const res = await request(dashboard).get(p).set(headers);
        expect(res.status).toBe(401);
        expect(res.headers["www-authenticate"]).toMatch(/^Basic realm=/);
        expect(res.text).not.toContain("rogue-1");
      }
    }
    expect(gateway.output()).not.toContain("wrong-password");
    expect(gateway.output()).not.toContain(PASSWORD);
  });

  it("is not on the public API port, with or without credentials", async () => {
    for (const p of ["/queues", "/queues/", "/queues/api/queues", "/queues/api/queues/settlements/rogue-1"]) {
      expect((await request(gateway.url).get(p)).status).toBe(404);
      expect((await request(gateway.url).get(p).set(OPERATOR)).status).toBe(404);
    }
  });
});

describe("what the dashboard shows", () => {
  it("shows a lookup's queued message (its ids) but never an identifier", async () => {
    const lookup = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: ["+12025550109"], checks: ["spam"], wait: 0 });
    expect(lookup.status).toBe(202);
    const res = await request(dashboard).get("/queues/api/queues?activeQueue=checks&status=latest").set(OPERATOR);
    expect(res.status).toBe(200);
    const checks = (res.body.queues as Array<{ name: string; jobs: Array<{ data: unknown }> }>).find((q) => q.name === "checks")!;
    expect(checks.jobs.map((j) => j.data)).toContainEqual(expect.objectContaining({ lookupId: lookup.body.id }));
    expect(res.text).not.toContain("2025550109");
  });

  it("hides data that is not the catalog's ids, and scrubs identifiers out of failure reasons and stack traces", async () => {
    const list = await request(dashboard).get("/queues/api/queues?activeQueue=settlements&status=failed").set(OPERATOR);
    const one = await request(dashboard).get("/queues/api/queues/settlements/rogue-1").set(OPERATOR);
    expect(list.status).toBe(200);
    expect(one.status).toBe(200);
    const job = one.body.job as { id: string; data: unknown; failedReason: string; stacktrace: string[] };
    expect(job.id).toBe("rogue-1");
    expect(job.data).toEqual({ hidden: expect.stringContaining("not shown") });
    expect(job.failedReason).toContain("could not settle for");
    expect(job.stacktrace.length).toBeGreaterThan(0);
    for (const body of [list.text, one.text]) {
      expect(body).toContain("rogue-1");
      for (const identifier of [PHONE, PHONE.slice(1), "2025550199", EMAIL, "jane.doe", "private-mail"]) expect(body).not.toContain(identifier);
    }
    const logs = await request(dashboard).get("/queues/api/queues/settlements/rogue-1/logs").set(OPERATOR);
    expect(logs.status).toBe(200);
  });

  it("is read-only by default: retrying, cleaning, adding, emptying are refused", async () => {
    const attempts = [
      request(dashboard).put("/queues/api/queues/settlements/retry/failed").set(OPERATOR),
      request(dashboard).put("/queues/api/queues/settlements/rogue-1/retry").set(OPERATOR),
      request(dashboard).put("/queues/api/queues/settlements/clean/failed").set(OPERATOR),
      request(dashboard).post("/queues/api/queues/settlements/add").set(OPERATOR).send({ name: "settle.reservation", data: {} }),
      request(dashboard).put("/queues/api/queues/checks/empty").set(OPERATOR),
      request(dashboard).put("/queues/api/queues/pause").set(OPERATOR),
    ];
    for (const res of await Promise.all(attempts)) expect(res.status).toBe(403);
    const settlements = new Queue("settlements", { connection: redis, prefix: queuePrefix(env.redisPrefix, "settlements") });
    expect(await settlements.getJobState("rogue-1")).toBe("failed");
    await settlements.close();
  });
});

describe("QUEUE_DASHBOARD_ACTIONS", () => {
  it("allows retrying, promoting and cleaning jobs, and nothing else", async () => {
    const port = await freePort();
    const gw = await startService("gateway", env, { PORT: "0", QUEUE_DASHBOARD_PORT: String(port), QUEUE_DASHBOARD_PASSWORD: PASSWORD, QUEUE_DASHBOARD_ACTIONS: "true" });
    try {
      const board = `http://127.0.0.1:${port}`;
      for (const res of await Promise.all([
        request(board).put("/queues/api/queues/checks/empty").set(OPERATOR),
        request(board).put("/queues/api/queues/checks/obliterate").set(OPERATOR),
        request(board).post("/queues/api/queues/settlements/add").set(OPERATOR).send({ name: "settle.reservation", data: {} }),
        request(board).patch("/queues/api/queues/settlements/rogue-1/update-data").set(OPERATOR).send({ data: {} }),
      ]))
        expect(res.status).toBe(403);
      const retried = await request(board).put("/queues/api/queues/settlements/rogue-1/retry").set(OPERATOR);
      expect(retried.status).toBe(204);
      const settlements = new Queue("settlements", { connection: redis, prefix: queuePrefix(env.redisPrefix, "settlements") });
      expect(["waiting", "active", "completed", "failed"]).toContain(await settlements.getJobState("rogue-1"));
      expect(await settlements.getJobState("rogue-1")).not.toBe("failed");
      await settlements.close();
    } finally {
      await gw.stop();
    }
  });
});

describe("a gateway of several processes (WEB_CONCURRENCY)", () => {
  it("serves one dashboard per host, from the cluster primary", async () => {
    const port = await freePort();
    const gw = await startService("gateway", env, { PORT: "0", WEB_CONCURRENCY: "2", QUEUE_DASHBOARD_PORT: String(port), QUEUE_DASHBOARD_PASSWORD: PASSWORD });
    try {
      const board = `http://127.0.0.1:${port}`;
      const res = await request(board).get("/queues/api/queues").set(OPERATOR);
      expect(res.status).toBe(200);
      expect((await request(board).get("/queues/api/queues")).status).toBe(401);
      expect(gw.output().match(/queue dashboard listening/g)).toHaveLength(1);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });
});

describe("start-up checks", () => {
  /** Starts a gateway that must refuse to start; resolves with its exit code and stderr. */
  const start = (extra: Record<string, string>) =>
    new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, "services", "gateway", "dist", "main.js")], {
        cwd: "/",
        env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { PORT: "18080", ...extra }) },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      child.on("close", (status) => {
        clearTimeout(timer);
        resolve({ status, stderr });
      });
    });

  it("refuses to start the dashboard without a password of at least 16 characters, without echoing it", async () => {
    const results = await Promise.all([start({ QUEUE_DASHBOARD_PORT: "19470" }), start({ QUEUE_DASHBOARD_PORT: "19470", QUEUE_DASHBOARD_PASSWORD: "short-pass-1234" })]);
    for (const res of results) {
      expect(res.status).toBe(1);
      expect(res.stderr).toContain("QUEUE_DASHBOARD_PASSWORD must be set, at least 16 characters");
      expect(res.stderr).not.toContain("short-pass-1234");
    }
  });

  it("refuses the public API port or the metrics port for the dashboard", async () => {
    const [api, metrics] = await Promise.all([
      start({ QUEUE_DASHBOARD_PORT: "18080", QUEUE_DASHBOARD_PASSWORD: PASSWORD }),
      start({ QUEUE_DASHBOARD_PORT: "19464", METRICS_PORT: "19464", QUEUE_DASHBOARD_PASSWORD: PASSWORD }),
    ]);
    expect(api.status).toBe(1);
    expect(api.stderr).toContain("QUEUE_DASHBOARD_PORT must differ from PORT");
    expect(metrics.status).toBe(1);
    expect(metrics.stderr).toContain("QUEUE_DASHBOARD_PORT must differ from METRICS_PORT");
  });
});
