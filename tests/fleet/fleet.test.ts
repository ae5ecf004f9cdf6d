import { spawnSync } from "node:child_process";
import path from "node:path";
import request from "supertest";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";

const ROOT = path.resolve(__dirname, "..", "..");
let env: TestEnv;
let store: Store;
let key: TestKey;

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  key = await accountWithKey(store, env.keyHashSecret);
});
afterAll(async () => store.close());

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the fleet as real processes", () => {
  let gateway: RunningService;
  let worker: RunningService;
  beforeAll(async () => {
    [gateway, worker] = await Promise.all([startService("gateway", env, { PORT: "0" }), startService("check-worker", env, { SWEEP_INTERVAL_MS: "60000" })]);
  });
  afterAll(async () => {
    await Promise.all([gateway?.stop(), worker?.stop()]);
  });

  it("completes a pending test lookup in the check-worker without anyone polling", async () => {
    const res = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: ["+12025550107"], checks: ["spam"], wait: 0 });
    expect(res.status).toBe(202);
    const status = await waitFor(async () => {
      const { rows } = await store.pool.query<{ status: string }>(`SELECT status FROM lookups WHERE id = $1`, [res.body.id]);
      return rows[0]?.status === "completed" ? rows[0].status : undefined;
    }, 8_000);
    expect(status).toBe("completed");
  });

  it("keeps numbers, addresses and keys out of every log line", async () => {
    const accessLines = () => (gateway.output().match(/"msg":"request"/g) ?? []).length;
    const before = accessLines();
    await request(gateway.url)
      .post("/v1/lookup")
      .set(bearer(key.key))
      .send({ numbers: ["+12125550177"], emails: ["private.person@corp.example"], checks: ["spam", "email"] });
    await request(gateway.url).post("/v1/lookup").set(bearer(`${key.key.slice(0, -2)}xx`)).send({ numbers: ["+12125550177"], checks: ["spam"] });
    // Identifiers put in a path, percent-encoded, by mistake or on purpose.
    await request(gateway.url).get("/v1/lookups/private.person%40corp.example").set(bearer(key.key));
    await request(gateway.url).get("/v1/lookups/%2B1%20212%20555%200177").set(bearer(key.key));
    await request(gateway.url).get("/v1/no-such/%2B1%20212%20555%200177");
    // Each access line is written as its response finishes and reaches this process
    // through a pipe: wait until all five have arrived before reading them.
    await waitFor(async () => (accessLines() >= before + 5 ? true : undefined), 5_000);
    const logs = gateway.output() + worker.output();
    expect(logs).toMatch(/"msg":"request"/);
    expect(logs).toMatch(/"route":"\/v1\/lookups\/:id"/);
    for (const secret of ["12125550177", "212%20555", "private.person", "corp.example", key.key, key.key.slice(9, 30)]) expect(logs).not.toContain(secret);
  });
});

describe("graceful shutdown", () => {
  it("answers a request held in `wait` before the gateway exits on SIGTERM, with exit code 0", async () => {
    const gateway = await startService("gateway", env, { PORT: "0" });
    const created = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: ["+12025550109"], checks: ["spam"], wait: 0 });
    expect(created.status).toBe(202);
    const held = request(gateway.url).get(`/v1/lookups/${created.body.id}?wait=30`).set(bearer(key.key)).then((r) => r);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const exit = gateway.stop("SIGTERM");
    const res = await held;
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("pending");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await exit).toBe(0);
    expect(gateway.output()).toMatch(/shutdown complete/);
  });

  it.each(["check-worker", "billing-ledger", "webhook-dispatcher"] as const)("stops %s on SIGTERM with exit code 0", async (name) => {
    const svc = await startService(name, env);
    expect(await svc.stop("SIGTERM")).toBe(0);
    expect(svc.output()).toMatch(/finish running jobs/);
  });
});

describe("configuration", () => {
  it("fails fast naming the missing or invalid variable, without echoing values", () => {
    const run = (extra: Record<string, string | undefined>) => {
      const childEnv: Record<string, string> = { PATH: process.env.PATH ?? "", ...serviceEnv(env) };
      for (const [k, v] of Object.entries(extra)) {
        if (v === undefined) delete childEnv[k];
        else childEnv[k] = v;
      }
      return spawnSync(process.execPath, [path.join(ROOT, "services", "gateway", "dist", "main.js")], { cwd: "/", env: childEnv, encoding: "utf8", timeout: 10_000 });
    };
    const missing = run({ KEY_HASH_SECRET: undefined });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("KEY_HASH_SECRET is required");
    const bad = run({ PORT: "not-a-port-secret-value", LOG_LEVEL: "loud" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("PORT");
    expect(bad.stderr).toContain("LOG_LEVEL must be one of");
    expect(bad.stderr).not.toContain("not-a-port-secret-value");
  });
});
