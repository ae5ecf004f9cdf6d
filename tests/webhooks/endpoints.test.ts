import { DEFAULT_SCOPES, PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { listEvents } from "@svc/store";
import type { Resolve } from "@svc/webhooks";
import { loadGatewayConfig } from "../../services/gateway/src/config";
import { serviceEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

// Host names resolve through this table only: the gateway never asks a real resolver.
const DNS: Record<string, string[]> = {
  "hooks.example.com": ["93.184.215.14"],
  "other.example.com": ["2606:4700:4700::1111"],
  "internal.example.com": ["10.1.2.3"],
  "sneaky.example.com": ["93.184.215.14", "127.0.0.1"],
  "metadata.example.com": ["169.254.169.254"],
};
const resolveHost: Resolve = async (host) => {
  const found = DNS[host];
  if (!found) throw new Error("ENOTFOUND");
  return found;
};

let gw: TestGateway;
let live: TestKey;
let test: TestKey;
const MANAGE = [...DEFAULT_SCOPES, "webhooks:manage" as const];

beforeAll(async () => {
  gw = await startTestGateway({ resolveHost });
});
// Each test has its own account (and so its own rate-limit buckets and endpoint count).
beforeEach(async () => {
  live = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", scopes: MANAGE });
  test = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: MANAGE, accountId: live.accountId });
});
afterAll(async () => gw.close());

const create = (body: object, key = live.key) => gw.http().post("/v1/webhook_endpoints").set(bearer(key)).send(body);
const list = (key = live.key) => gw.http().get("/v1/webhook_endpoints").set(bearer(key));
const patch = (id: string, body: object, key = live.key) => gw.http().patch(`/v1/webhook_endpoints/${id}`).set(bearer(key)).send(body);
const del = (id: string, key = live.key) => gw.http().delete(`/v1/webhook_endpoints/${id}`).set(bearer(key));
const fire = (id: string, key = live.key) => gw.http().post(`/v1/webhook_endpoints/${id}/test`).set(bearer(key));
const events = async (type: string) => (await listEvents(gw.store.pool, live.accountId, type));

describe("webhook endpoints API", () => {
  it("creates a pending endpoint, shows the secret once, and records its first challenge", async () => {
    const res = await create({ url: "https://hooks.example.com/in?src=svc", events: ["lookup.completed", "job.completed"] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: "webhook_endpoint",
      url: "https://hooks.example.com/in?src=svc",
      events: ["lookup.completed", "job.completed"],
      status: "pending_verification",
      livemode: true,
      verified_at: null,
    });
    expect(res.body.id).toMatch(/^we_/);
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    // Never shown again, and not stored in the clear.
    const listed = (await list()).body.data.find((e: { id: string }) => e.id === res.body.id);
    expect(listed).toMatchObject({ id: res.body.id, status: "pending_verification" });
    expect(listed.secret).toBeUndefined();
    const { rows } = await gw.store.pool.query(`SELECT secret_encrypted FROM webhook_endpoints WHERE id = $1`, [res.body.id]);
    expect(Buffer.from(rows[0].secret_encrypted).toString("latin1")).not.toContain(res.body.secret.slice(6));
    const challenge = (await events("webhook.verification")).find((e) => e.endpoint_id === res.body.id);
    expect(challenge?.data).toMatchObject({ object: "webhook_endpoint", id: res.body.id });
    expect(String(challenge?.data.challenge)).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });

  it("lists only the key's mode and never deleted endpoints; test-key endpoints are livemode false", async () => {
    const t = await create({ url: "https://hooks.example.com/test", events: ["job.completed"] }, test.key);
    expect(t.status).toBe(201);
    expect(t.body.livemode).toBe(false);
    expect((await list(test.key)).body.data.map((e: { id: string }) => e.id)).toEqual([t.body.id]);
    expect((await list()).body.data.map((e: { id: string }) => e.id)).not.toContain(t.body.id);
    // Another mode's endpoint is not found through this key.
    expect((await patch(t.body.id, { events: ["job.failed"] })).status).toBe(404);
    expect((await del(t.body.id)).status).toBe(404);
    expect((await fire(t.body.id)).status).toBe(404);
    expect((await del(t.body.id, test.key)).status).toBe(204);
    expect((await list(test.key)).body.data).toEqual([]);
    expect((await del(t.body.id, test.key)).status).toBe(404);
    expect((await patch(t.body.id, { events: ["job.failed"] }, test.key)).status).toBe(404);
  });

  it("changes events without touching verification, and a new URL needs verifying again", async () => {
    const made = (await create({ url: "https://hooks.example.com/a", events: ["lookup.completed"] })).body;
    await gw.store.pool.query(`UPDATE webhook_endpoints SET status = 'active', verified_at = now() WHERE id = $1`, [made.id]);
    const before = (await events("webhook.verification")).filter((e) => e.endpoint_id === made.id).length;

    const ev = await patch(made.id, { events: ["job.completed", "balance.low"] });
    expect(ev.status).toBe(200);
    expect(ev.body).toMatchObject({ id: made.id, events: ["job.completed", "balance.low"], status: "active", url: "https://hooks.example.com/a" });
    expect(ev.body.secret).toBeUndefined();
    const same = await patch(made.id, { url: "https://hooks.example.com/a" });
    expect(same.body.status).toBe("active");
    expect((await events("webhook.verification")).filter((e) => e.endpoint_id === made.id)).toHaveLength(before);

    const moved = await patch(made.id, { url: "https://other.example.com/b" });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ url: "https://other.example.com/b", status: "pending_verification", verified_at: null, events: ["job.completed", "balance.low"] });
    expect((await events("webhook.verification")).filter((e) => e.endpoint_id === made.id)).toHaveLength(before + 1);
  });

  it("queues a webhook.test event with 202, even before verification", async () => {
    const made = (await create({ url: "https://hooks.example.com/t", events: ["job.failed"] })).body;
    const res = await fire(made.id);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: "event", type: "webhook.test" });
    const recorded = (await events("webhook.test")).find((e) => e.id === res.body.id);
    expect(recorded).toMatchObject({ endpoint_id: made.id, livemode: true, data: { object: "webhook_endpoint", id: made.id } });
  });

  it("refuses URLs that are not https or do not resolve only to public addresses, without echoing them", async () => {
    const cases: Array<[string, RegExp]> = [
      ["http://hooks.example.com/in", /https/],
      ["https://internal.example.com/in", /public/],
      ["https://sneaky.example.com/in", /public/],
      ["https://metadata.example.com/latest", /public/],
      ["https://nowhere.example.com/in", /resolve/],
      ["https://127.0.0.1/in", /public/],
      ["https://2130706433/in", /public/],
      ["https://0x7f.1/in", /public/],
      ["https://[::1]/in", /public/],
      ["https://[::ffff:10.0.0.1]/in", /public/],
      ["https://[fd00::1]/in", /public/],
      ["https://user:pw@hooks.example.com/in", /password/],
      ["not a url", /not valid/],
    ];
    for (const [url, message] of cases) {
      const res = await create({ url, events: ["job.completed"] });
      expect([url, res.status, res.body.error?.code, res.body.error?.param]).toEqual([url, 400, "invalid_request", "url"]);
      expect(res.body.error.message).toMatch(message);
      const host = url.replace(/^\w+:\/\//, "").split("/")[0] as string;
      expect(`${res.body.error.message} ${res.body.error.suggestion ?? ""}`).not.toContain(host);
    }
    const made = (await create({ url: "https://hooks.example.com/ok", events: ["job.completed"] })).body;
    const res = await patch(made.id, { url: "https://internal.example.com/x" });
    expect([res.status, res.body.error.param]).toEqual([400, "url"]);
    expect((await list()).body.data.find((e: { id: string }) => e.id === made.id).url).toBe("https://hooks.example.com/ok");
  });

  it("validates bodies: known subscribable events only, at least one field on PATCH", async () => {
    expect((await create({ url: "https://hooks.example.com/x", events: [] })).status).toBe(400);
    expect((await create({ url: "https://hooks.example.com/x", events: ["webhook.test"] })).body.error.param).toBe("events[0]");
    expect((await create({ url: "https://hooks.example.com/x", events: ["job.completed", "job.completed"] })).status).toBe(400);
    expect((await create({ url: "https://hooks.example.com/x" })).body.error.param).toBe("events");
    expect((await create({ url: "https://hooks.example.com/x", events: ["job.completed"], secret: "mine" })).status).toBe(400);
    const made = (await create({ url: "https://hooks.example.com/y", events: ["job.completed"] })).body;
    expect((await patch(made.id, {})).status).toBe(400);
  });

  it("allows 20 endpoints per mode per account", async () => {
    // Two keys of one account, so the per-key rate limit (burst 20) is not what stops the burst.
    const owner = live;
    const second = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", scopes: MANAGE, accountId: live.accountId });
    const sameAccountTest = test;
    const results = await Promise.all(
      Array.from({ length: 22 }, (_, i) => create({ url: `https://hooks.example.com/${i}`, events: ["job.completed"] }, i % 2 ? owner.key : second.key)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body.error.code])).toEqual([[400, "invalid_request"], [400, "invalid_request"]]);
    expect(refused[0]?.body.error.message).toMatch(/20 webhook endpoints per mode/);
    // The other mode has its own 20; deleting one frees a place.
    expect((await create({ url: "https://hooks.example.com/t", events: ["job.completed"] }, sameAccountTest.key)).status).toBe(201);
    const first = results.find((r) => r.status === 201)?.body.id as string;
    expect((await del(first, owner.key)).status).toBe(204);
    expect((await create({ url: "https://hooks.example.com/again", events: ["job.completed"] }, owner.key)).status).toBe(201);
  });

  it("needs webhooks:manage, and is refused to the public sandbox key as invalid_request", async () => {
    const plain = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live" });
    const res = await create({ url: "https://hooks.example.com/x", events: ["job.completed"] }, plain.key);
    expect([res.status, res.body.error.code]).toEqual([403, "insufficient_scope"]);
    expect((await list(plain.key)).status).toBe(403);
    for (const call of [list(PUBLIC_SANDBOX_KEY), create({ url: "https://hooks.example.com/x", events: ["job.completed"] }, PUBLIC_SANDBOX_KEY)]) {
      const r = await call;
      expect([r.status, r.body.error.code]).toEqual([400, "invalid_request"]);
      expect(r.body.error.message).toMatch(/sandbox/);
    }
  });

  it("lookups and jobs may name only a verified endpoint of the key's mode", async () => {
    const made = (await create({ url: "https://hooks.example.com/l", events: ["lookup.completed"] }, test.key)).body;
    const lookup = (id: string, key = test.key) => gw.http().post("/v1/lookup").set(bearer(key)).send({ numbers: ["+12025550101"], checks: ["spam"], webhook_endpoint_id: id });
    const pending = await lookup(made.id);
    expect([pending.status, pending.body.error.param]).toEqual([400, "webhook_endpoint_id"]);
    await gw.store.pool.query(`UPDATE webhook_endpoints SET status = 'active' WHERE id = $1`, [made.id]);
    expect((await lookup(made.id)).status).toBe(200);
    const wrongMode = await gw.http().post("/v1/lookup").set(bearer(live.key)).send({ numbers: ["+12025550101"], checks: ["spam"], webhook_endpoint_id: made.id });
    expect([wrongMode.status, wrongMode.body.error.code]).toEqual([400, "invalid_request"]);
    await del(made.id, test.key);
    expect((await lookup(made.id)).status).toBe(400);
  });
});

describe("webhook development settings", () => {
  const base = () => serviceEnv({ databaseUrl: "postgresql://x@127.0.0.1/x", redisUrl: "redis://127.0.0.1:6379", redisPrefix: "x", keyHashSecret: "k".repeat(40), messageKey: "m".repeat(44) });

  it("are refused in production", () => {
    expect(() => loadGatewayConfig({ ...base(), NODE_ENV: "production", WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8" })).toThrow(/WEBHOOK_ALLOW_PRIVATE_RANGES .*production/);
    expect(() => loadGatewayConfig({ ...base(), NODE_ENV: "production", WEBHOOK_EXTRA_CA_FILE: __filename })).toThrow(/WEBHOOK_EXTRA_CA_FILE .*production/);
    expect(loadGatewayConfig({ ...base(), NODE_ENV: "production" }).webhooks.policy.allowedPrivate).toEqual([]);
  });

  it("are validated at start-up", () => {
    expect(() => loadGatewayConfig({ ...base(), WEBHOOK_ALLOW_PRIVATE_RANGES: "localhost" })).toThrow(/CIDR/);
    expect(() => loadGatewayConfig({ ...base(), WEBHOOK_EXTRA_CA_FILE: "/nonexistent/ca.pem" })).toThrow(/cannot be read/);
    expect(() => loadGatewayConfig({ ...base(), DATA_ENCRYPTION_KEY: Buffer.alloc(16).toString("base64").padEnd(44, "A") })).toThrow(/32 bytes/);
    expect(loadGatewayConfig({ ...base(), WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8, ::1/128" }).webhooks.policy.allowedPrivate).toHaveLength(2);
  });
});
