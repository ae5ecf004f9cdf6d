import type { AddressInfo } from "node:net";
import request from "supertest";
import { apiKeyFromBody, generateApiKey, hashApiKey, PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { revokeApiKey } from "@svc/store";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { accountWithKey, bearer } from "../support/fixtures";
import { createTestEnv } from "../support/env";
import { withAdmin } from "../support/pg-admin";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;

/** Polls until `check` holds, failing after `ms`. */
async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Spends a gateway's database confirmations and keeps them spent until restored. */
async function drained(g: TestGateway): Promise<{ restore(): void }> {
  const set = g.deps.caches.liveKeys;
  const spy = jest.spyOn(set, "takeMissConfirmation").mockReturnValue(false);
  return { restore: () => spy.mockRestore() };
}
beforeAll(async () => {
  // Loopback is a trusted proxy here, so tests can present other client addresses via X-Forwarded-For.
  gw = await startTestGateway({ config: { TRUSTED_PROXIES: "127.0.0.1/32,::1/128" } });
});
afterAll(async () => gw.close());

const lookupBody = { numbers: ["+12025550100"], checks: ["number.spam"] };

/** The parts of a 401 that must be identical whatever the reason. */
function shapeOf(res: request.Response) {
  const { request_id, ...rest } = res.body.error;
  expect(request_id).toBe(res.headers["x-request-id"]);
  return { status: res.status, wwwAuthenticate: res.headers["www-authenticate"], body: rest };
}

describe("authentication", () => {
  it("answers forged keys without a query and never refuses a real key, however many forged keys its network sent", async () => {
    await gw.deps.caches.liveKeys.whenTrusted();
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const hash = hashApiKey(gw.env.keyHashSecret, k.key);
    await until(() => gw.deps.caches.liveKeys.mightExist(hash) === true);
    expect(gw.deps.caches.keys.get(hash.toString("hex"))).toBeUndefined();
    const from = (ip: string, key: string) => gw.http().post("/v1/lookup").set("X-Forwarded-For", ip).set(bearer(key)).send(lookupBody);

    const queries = jest.spyOn(gw.deps.store.pool, "query");
    try {
      const started = Date.now();
      for (let i = 0; i < 200; i += 1) expect((await from("198.51.100.9", generateApiKey("test"))).status).toBe(401);
      // Only the per-process budget of confirmations reached the database: 20 at once,
      // then 20 a second; never one query per forged key.
      const budget = 20 + Math.ceil(((Date.now() - started) / 1000) * 20);
      expect(queries.mock.calls.length).toBeLessThanOrEqual(budget);
      expect(queries.mock.calls.length).toBeLessThan(200);
    } finally {
      queries.mockRestore();
    }
    // The real key, never seen by this gateway's key cache, from that same network: served.
    const res = await from("198.51.100.9", k.key);
    expect(res.status).toBe(200);
    expect(res.headers["retry-after"]).toBeUndefined();
  });

  it("knows a key created after start-up at once, on every gateway process", async () => {
    const other = await startTestGateway({ env: gw.env, config: { TRUSTED_PROXIES: "127.0.0.1/32,::1/128" } });
    try {
      await Promise.all([gw.deps.caches.liveKeys.whenTrusted(), other.deps.caches.liveKeys.whenTrusted()]);
      // Made by the admin CLI's path (straight into the store): both processes hear of it.
      const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
      const hash = hashApiKey(gw.env.keyHashSecret, k.key);
      await until(() => gw.deps.caches.liveKeys.mightExist(hash) === true && other.deps.caches.liveKeys.mightExist(hash) === true, 1_000);
      // Made through POST /v1/test-keys on one process, used at once on the other.
      const challenge = (await gw.http().get("/v1/test-keys/challenge").set("X-Forwarded-For", "203.0.113.77")).body;
      const created = await gw
        .http()
        .post("/v1/test-keys")
        .set("X-Forwarded-For", "203.0.113.77")
        .send({ email: "fresh@keys.example", name: "N", company: "C", use_case: "U", challenge_token: `${challenge.challenge}:${solveChallenge(challenge.challenge, challenge.difficulty)}` });
      expect(created.status).toBe(201);
      const used = await other.http().post("/v1/lookup").set(bearer(created.body.key)).send(lookupBody);
      expect(used.status).toBe(200);
      const fresh = hashApiKey(gw.env.keyHashSecret, created.body.key);
      expect(gw.deps.caches.liveKeys.mightExist(fresh)).toBe(true);
      await until(() => other.deps.caches.liveKeys.mightExist(fresh) === true, 1_000);
      // With no confirmations left, the key is served from what the set learnt of it.
      const noBudget = await drained(other);
      const k2 = await accountWithKey(gw.store, gw.env.keyHashSecret);
      await until(() => other.deps.caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, k2.key)) === true, 1_000);
      expect((await other.http().post("/v1/lookup").set(bearer(k2.key)).send(lookupBody)).status).toBe(200);
      noBudget.restore();
    } finally {
      await other.close();
    }
  });

  it("refuses a revoked key without a query once the revocation is announced", async () => {
    await gw.deps.caches.liveKeys.whenTrusted();
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const hash = hashApiKey(gw.env.keyHashSecret, k.key);
    expect((await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status).toBe(200);
    await revokeApiKey(gw.store.pool, k.keyId);
    await until(() => gw.deps.caches.liveKeys.mightExist(hash) === false, 1_000);
    const noBudget = await drained(gw);
    const queries = jest.spyOn(gw.deps.store.pool, "query");
    try {
      expect((await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status).toBe(401);
      expect(queries).not.toHaveBeenCalled();
    } finally {
      queries.mockRestore();
      noBudget.restore();
    }
  });

  it("gives every kind of bad key the same 401", async () => {
    const live = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    const revoked = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await revokeApiKey(gw.store.pool, revoked.keyId);
    const expired = await accountWithKey(gw.store, gw.env.keyHashSecret, { expiresAt: new Date(Date.now() + 60_000) });
    const fenced = await accountWithKey(gw.store, gw.env.keyHashSecret, { allowIps: ["203.0.113.0/24"] });
    const valid = generateApiKey("test");
    const badChecksum = `${valid.slice(0, -1)}${valid.endsWith("A") ? "B" : "A"}`;

    gw.setNow(new Date(Date.now() + 120_000));
    try {
      const attempts: Array<request.Test> = [
        gw.http().post("/v1/lookup").send(lookupBody),
        gw.http().post("/v1/lookup").set("Authorization", `Basic ${Buffer.from("a:b").toString("base64")}`).send(lookupBody),
        gw.http().post("/v1/lookup").set("Authorization", "Bearer").send(lookupBody),
        gw.http().post("/v1/lookup").set(bearer("svc_test_short")).send(lookupBody),
        gw.http().post("/v1/lookup").set(bearer(badChecksum)).send(lookupBody),
        gw.http().post("/v1/lookup").set(bearer(valid)).send(lookupBody), // well-formed, unknown
        gw.http().post("/v1/lookup").set(bearer(revoked.key)).send(lookupBody),
        gw.http().post("/v1/lookup").set(bearer(expired.key)).send(lookupBody),
        gw.http().post("/v1/lookup").set(bearer(fenced.key)).set("X-Forwarded-For", "198.51.100.7").send(lookupBody),
        gw.http().post(`/v1/lookup?api_key=${live.key}`).send(lookupBody),
        gw.http().post(`/v1/lookup?x=${live.key}`).set(bearer(live.key)).send(lookupBody),
      ];
      const shapes = (await Promise.all(attempts)).map(shapeOf);
      for (const s of shapes) {
        expect(s).toEqual({
          status: 401,
          wwwAuthenticate: 'Bearer realm="api"',
          body: { code: "unauthorized", message: shapes[0]?.body.message, status: 401, retryable: false, param: null, doc_url: `${gw.url}/docs/errors#unauthorized` },
        });
      }
    } finally {
      gw.setNow(null);
    }
  });

  it("accepts a valid key until it is revoked, even while the gateway has it cached", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const cacheKey = hashApiKey(gw.env.keyHashSecret, k.key).toString("hex");
    // The key's own creation is announced too, and that notice may land just after the
    // first request cached the record (dropping it): ask until the record stays cached.
    const cachedBy = Date.now() + 2_000;
    do {
      expect((await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status).toBe(200);
    } while (gw.deps.caches.keys.get(cacheKey) === undefined && Date.now() < cachedBy);
    expect(gw.deps.caches.keys.get(cacheKey)).toBeDefined();
    await revokeApiKey(gw.store.pool, k.keyId);
    // The revocation reaches the cache as a Postgres notification, within milliseconds.
    const deadline = Date.now() + 2_000;
    let status = 200;
    while (status !== 401 && Date.now() < deadline) status = (await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status;
    expect(status).toBe(401);
    // The stale entry was dropped; what is cached now is the revoked record.
    expect(gw.deps.caches.keys.get(cacheKey)?.revoked_at).toBeInstanceOf(Date);
  });

  it("stops caching while it cannot hear invalidations", async () => {
    const { CacheInvalidator } = await import("../../services/gateway/src/cache/caches");
    const { createCaches } = await import("../../services/gateway/src/cache/caches");
    const caches = createCaches();
    const inv = new CacheInvalidator(gw.env.databaseUrl, caches, gw.deps.logger);
    expect(caches.keys.isEnabled).toBe(false);
    expect(caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, PUBLIC_SANDBOX_KEY))).toBeNull();
    await inv.start();
    expect(caches.keys.isEnabled).toBe(true);
    await caches.liveKeys.whenTrusted();
    expect(caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, PUBLIC_SANDBOX_KEY))).toBe(true);
    await gw.store.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-cache' AND datname = current_database() AND pid <> pg_backend_pid() AND backend_start = (SELECT max(backend_start) FROM pg_stat_activity WHERE application_name = 'gateway-cache')`);
    const deadline = Date.now() + 2_000;
    while (caches.keys.isEnabled && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(caches.keys.isEnabled).toBe(false);
    expect(caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, PUBLIC_SANDBOX_KEY))).toBeNull();
    await inv.stop();
  });

  it("keeps trying to listen again while the database refuses connections, and recovers when it is back", async () => {
    const { CacheInvalidator, createCaches } = await import("../../services/gateway/src/cache/caches");
    const env = await createTestEnv();
    const dbName = new URL(env.databaseUrl).pathname.slice(1);
    const caches = createCaches();
    const inv = new CacheInvalidator(env.databaseUrl, caches, gw.deps.logger);
    await inv.start();
    await caches.liveKeys.whenTrusted();
    try {
      await withAdmin(async (admin) => {
        await admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS false`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [dbName]);
      });
      await until(() => !caches.keys.isEnabled && !caches.liveKeys.isTrusted, 2_000);
      await new Promise((r) => setTimeout(r, 2_500)); // at least two refused attempts
      expect(caches.keys.isEnabled).toBe(false);
      await withAdmin((admin) => admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`));
      await until(() => caches.keys.isEnabled && caches.liveKeys.isTrusted, 3_000);
    } finally {
      await withAdmin((admin) => admin.query(`ALTER DATABASE "${dbName}" ALLOW_CONNECTIONS true`));
      await inv.stop();
    }
  });

  it("asks the database rather than refusing while its set of live keys cannot be trusted, and reloads it when listening again", async () => {
    await gw.deps.caches.liveKeys.whenTrusted();
    // Cut this gateway's listening connection: announcements made meanwhile are lost.
    await gw.store.pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-cache' AND datname = current_database()`);
    await until(() => !gw.deps.caches.liveKeys.isTrusted, 2_000);
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret); // its insert is announced to no one here
    const noBudget = await drained(gw);
    try {
      expect(gw.deps.caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, k.key))).toBeNull();
      expect((await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status).toBe(200);
      // Listening again (within about a second), the set is reloaded and has the key.
      await gw.deps.caches.liveKeys.whenTrusted();
      expect(gw.deps.caches.liveKeys.mightExist(hashApiKey(gw.env.keyHashSecret, k.key))).toBe(true);
      expect((await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody)).status).toBe(200);
    } finally {
      noBudget.restore();
    }
  });

  it("refuses a key sent in the query string even alongside a valid header", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const res = await gw.http().get(`/v1/services?key=${k.key}`).set(bearer(k.key));
    expect(res.status).toBe(401);
  });

  it("accepts the published sandbox key", async () => {
    expect(PUBLIC_SANDBOX_KEY).toBe(apiKeyFromBody("test", "publicSandboxDemoKey2026v1AbCd"));
    const res = await gw.http().post("/v1/lookup").set(bearer(PUBLIC_SANDBOX_KEY)).send(lookupBody);
    expect(res.status).toBe(200);
    expect(res.body.livemode).toBe(false);
  });
});

describe("scopes", () => {
  it("refuses an endpoint outside the key's scopes with 403 insufficient_scope", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["account:read"] });
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send(lookupBody);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: "insufficient_scope", retryable: false, param: null });
    expect(res.body.error.message).toContain("lookup:write");
  });

  it("gives test and live keys every scope but webhooks:manage by default", async () => {
    const { scopesForNewKey, DEFAULT_SCOPES } = await import("@svc/domain");
    expect(scopesForNewKey("test", undefined)).toEqual([...DEFAULT_SCOPES]);
    expect(scopesForNewKey("live", undefined)).not.toContain("webhooks:manage");
    expect(scopesForNewKey("live", undefined)).toEqual(["lookup:write", "jobs:write", "jobs:read", "jobs:read_all", "account:read"]);
    expect(() => scopesForNewKey("agent", undefined)).toThrow();
    expect(scopesForNewKey("agent", ["lookup:write"])).toEqual(["lookup:write"]);
  });

  it("lets an agent key use exactly the scopes it was issued", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write"] });
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: ["+12125551234"], checks: ["spam"] });
    // Agent keys are live: the request is authorised and reaches the live path.
    expect(res.status).not.toBe(401);
    expect(res.status).not.toBe(403);
  });
});

describe("IP allowlists", () => {
  const ask = (key: string, from?: string) => {
    const r = gw.http().post("/v1/lookup").set(bearer(key));
    if (from) r.set("X-Forwarded-For", from);
    return r.send(lookupBody);
  };

  it("matches IPv4 addresses and CIDR ranges", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { allowIps: ["198.51.100.0/24", "192.0.2.9/32"] });
    expect((await ask(k.key, "198.51.100.77")).status).toBe(200);
    expect((await ask(k.key, "192.0.2.9")).status).toBe(200);
    expect((await ask(k.key, "192.0.2.10")).status).toBe(401);
  });

  it("refuses a live key without an allowlist once its account requires allowlists, as soon as the switch is on", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    const fenced = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: k.accountId, allowIps: ["198.51.100.0/24"] });
    const testKey = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: k.accountId });
    const read = (key: string) => gw.http().get("/v1/account").set("X-Forwarded-For", "198.51.100.7").set(bearer(key));
    expect((await read(k.key)).status).toBe(200); // now cached
    await gw.store.pool.query(`UPDATE accounts SET require_ip_allowlist = true WHERE id = $1`, [k.accountId]);
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      status = (await read(k.key)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
    expect((await read(fenced.key)).status).toBe(200);
    expect((await read(testKey.key)).status).toBe(200); // test keys never need one
  });

  it("matches IPv6 addresses and ranges", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { allowIps: ["2001:db8:1::/48"] });
    expect((await ask(k.key, "2001:db8:1:ffff::5")).status).toBe(200);
    expect((await ask(k.key, "2001:db8:2::5")).status).toBe(401);
  });

  it("matches an IPv4-mapped IPv6 caller as its IPv4 address", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { allowIps: ["198.51.100.0/24"] });
    expect((await ask(k.key, "::ffff:198.51.100.20")).status).toBe(200);
    expect((await ask(k.key, "::ffff:198.51.101.20")).status).toBe(401);
  });

  it("uses the socket address when the peer is not a trusted proxy", async () => {
    const strict = await startTestGateway({ env: gw.env }); // no trusted proxies
    try {
      const k = await accountWithKey(strict.store, strict.env.keyHashSecret, { allowIps: ["198.51.100.0/24"] });
      const spoofed = await strict.http().post("/v1/lookup").set(bearer(k.key)).set("X-Forwarded-For", "198.51.100.1").send(lookupBody);
      expect(spoofed.status).toBe(401);
      const loopback = await accountWithKey(strict.store, strict.env.keyHashSecret, { allowIps: ["127.0.0.0/8"] });
      expect((await strict.http().post("/v1/lookup").set(bearer(loopback.key)).send(lookupBody)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it("matches a real IPv4-mapped socket address on a dual-stack listener", async () => {
    const dual = await startTestGateway({ env: gw.env, host: "::" });
    try {
      const k = await accountWithKey(dual.store, dual.env.keyHashSecret, { allowIps: ["127.0.0.1"] });
      // Connecting to 127.0.0.1 on a "::" listener presents the peer as ::ffff:127.0.0.1.
      const port = (dual.server.address() as AddressInfo).port;
      const res = await request(`http://127.0.0.1:${port}`).post("/v1/lookup").set(bearer(k.key)).send(lookupBody);
      expect(res.status).toBe(200);
      const v6only = await accountWithKey(dual.store, dual.env.keyHashSecret, { allowIps: ["::1"] });
      expect((await request(`http://[::1]:${port}`).post("/v1/lookup").set(bearer(v6only.key)).send(lookupBody)).status).toBe(200);
      expect((await request(`http://127.0.0.1:${port}`).post("/v1/lookup").set(bearer(v6only.key)).send(lookupBody)).status).toBe(401);
    } finally {
      await dual.close();
    }
  });
});

