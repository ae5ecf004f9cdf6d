import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { accountWithKey, bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { sandboxWindowKeys } from "../../services/gateway/src/http/rate-limit";

let a: TestGateway;
let b: TestGateway;
beforeAll(async () => {
  a = await startTestGateway({ config: { TRUSTED_PROXIES: "127.0.0.1/32" } });
  // A second gateway on the same Postgres and Redis: one fleet, two replicas.
  b = await startTestGateway({ env: a.env, config: { TRUSTED_PROXIES: "127.0.0.1/32" } });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe("rate limiting", () => {
  it("allows a burst of 20 then about 10 a second per key, across gateway replicas", async () => {
    const k = await accountWithKey(a.store, a.env.keyHashSecret);
    const started = Date.now();
    const responses = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).http().get("/v1/account").set(bearer(k.key)).then((r) => r)));
    const elapsedS = (Date.now() - started) / 1000;
    const ok = responses.filter((r) => r.status === 200).length;
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toBeGreaterThanOrEqual(20);
    expect(ok).toBeLessThanOrEqual(20 + Math.ceil(elapsedS * 10) + 1);
    expect(limited.length).toBe(40 - ok);
    expect(limited[0]?.body.error).toMatchObject({ code: "rate_limited", retryable: true, param: null });
    expect(Number(limited[0]?.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // Another key is unaffected; the first key recovers at 10 a second.
    const other = await accountWithKey(a.store, a.env.keyHashSecret);
    expect((await b.http().get("/v1/account").set(bearer(other.key))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_100));
    const after = await Promise.all(Array.from({ length: 8 }, () => a.http().get("/v1/account").set(bearer(k.key)).then((r) => r.status)));
    expect(after.filter((s) => s === 200).length).toBeGreaterThanOrEqual(8);
  });

  it("limits the public sandbox key per IP: 30 a minute", async () => {
    const from = (ip: string) => a.http().get("/v1/limits").set(bearer(PUBLIC_SANDBOX_KEY)).set("X-Forwarded-For", ip);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i += 1) statuses.push((await from("198.51.100.30")).status);
    expect(statuses.slice(0, 30).every((s) => s === 200)).toBe(true);
    const limited = await from("198.51.100.30");
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe("rate_limited");
    expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect((await from("198.51.100.31")).status).toBe(200);
    const body = (await from("198.51.100.32")).body;
    expect(body.request_rate).toEqual({ per_minute: 30, per_day: 1000, scope: "ip" });
    expect(body.request_sizes.job_identifiers).toBe(10);
  });

  it("limits the public sandbox key per IP: 1,000 a UTC day", async () => {
    const ip = "198.51.100.40";
    const day = new Date().toISOString().slice(0, 10);
    await a.deps.redis.set(sandboxWindowKeys(a.env.redisPrefix, ip, day)[1], "1000", "EX", 3600);
    const res = await a.http().get("/v1/limits").set(bearer(PUBLIC_SANDBOX_KEY)).set("X-Forwarded-For", ip);
    expect(res.status).toBe(429);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(60);
  });
});
