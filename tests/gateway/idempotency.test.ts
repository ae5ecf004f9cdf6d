import { createHash } from "node:crypto";
import type { Request } from "express";
import { callerScope } from "../../services/gateway/src/http/idempotency";
import { canonicalJson } from "../../services/gateway/src/http/request-hash";
import type { Caller } from "../../services/gateway/src/caller";
import { bindIdempotentResource, claimIdempotencyKey, completeIdempotencyKey, purgeExpired } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
let k: TestKey;
beforeAll(async () => {
  gw = await startTestGateway();
  k = await accountWithKey(gw.store, gw.env.keyHashSecret);
});
afterAll(async () => gw.close());

const post = (body: object, idem?: string, key = k.key) => {
  const r = gw.http().post("/v1/lookup").set(bearer(key));
  if (idem !== undefined) r.set("Idempotency-Key", idem);
  return r.send(body);
};
const lookupsOf = async (accountId: string) =>
  (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM lookups WHERE account_id = $1`, [accountId])).rows[0]?.n;

describe("Idempotency-Key", () => {
  it("replays the stored response for the same key and body", async () => {
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    const first = await post(body, "order-1");
    expect(first.status).toBe(200);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    // Same body re-serialised with other key order and spacing is the same body.
    const again = await gw.http().post("/v1/lookup").set(bearer(k.key)).set("Idempotency-Key", "order-1").set("Content-Type", "application/json").send('{ "checks": ["spam"],  "numbers": ["+12025550100"] }');
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toEqual(first.body);
    // The replay is its own HTTP exchange: its own request id.
    expect(again.headers["x-request-id"]).toMatch(/^req_/);
    expect(again.headers["x-request-id"]).not.toBe(first.headers["x-request-id"]);
    expect(await lookupsOf(k.accountId)).toBe(1);
  });

  it("refuses the same key with a different body: 409 idempotency_key_reused", async () => {
    await post({ numbers: ["+12025550100"], checks: ["spam"] }, "order-2");
    const res = await post({ numbers: ["+12025550101"], checks: ["spam"] }, "order-2");
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "idempotency_key_reused", retryable: false });
  });

  it("answers 409 idempotency_request_in_progress (retryable) while the first request runs", async () => {
    const body = { numbers: ["+12025550107"], checks: ["spam"], wait: 5 };
    const first = post(body, "order-3").then((r) => r); // supertest sends on then()
    await new Promise((r) => setTimeout(r, 300));
    const second = await post(body, "order-3");
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: "idempotency_request_in_progress", retryable: true });
    expect(second.headers["retry-after"]).toBeDefined();
    expect((await first).status).toBe(200);
    const third = await post(body, "order-3");
    expect(third.headers["idempotent-replayed"]).toBe("true");
    expect(third.body.id).toBe((await first).body.id);
  });

  it("stores non-retryable errors and replays them, but not retryable ones", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const bad = { numbers: ["+12025550100"], checks: ["spam", "hlr"] };
    const a = await post(bad, "err-1", own.key);
    expect(a.status).toBe(403);
    const b = await post(bad, "err-1", own.key);
    expect(b.status).toBe(403);
    expect(b.headers["idempotent-replayed"]).toBe("true");
    expect(b.body.error.request_id).toBe(a.body.error.request_id);

    const outage = { numbers: ["+12025550108"], checks: ["spam"] };
    expect((await post(outage, "err-2", own.key)).status).toBe(503);
    const retry = await post(outage, "err-2", own.key);
    expect(retry.status).toBe(503);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
  });

  it("is scoped to the API key: another account, another key of the account, or the live key never gets this key's replay", async () => {
    const other = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const sibling = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: k.accountId });
    const live = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: k.accountId, mode: "live" });
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    const mine = await post(body, "shared-key");
    for (const key of [other.key, sibling.key]) {
      const theirs = await post(body, "shared-key", key);
      expect(theirs.status).toBe(200);
      expect(theirs.headers["idempotent-replayed"]).toBeUndefined();
      expect(theirs.body.id).not.toBe(mine.body.id);
    }
    // The live key runs its own request (here refused: a test number with a live key), never the test replay.
    const fromLive = await post(body, "shared-key", live.key);
    expect(fromLive.headers["idempotent-replayed"]).toBeUndefined();
    expect(fromLive.body.error.code).toBe("test_number_only");
  });

  it("scopes the shared public sandbox key per caller network", () => {
    const sandbox = { keyId: "key_sandbox", isSandbox: true } as Caller;
    const personal = { keyId: "key_mine", isSandbox: false } as Caller;
    const from = (ip: string) => ({ ip }) as Request;
    expect(callerScope(from("203.0.113.7"), sandbox)).not.toBe(callerScope(from("198.51.100.7"), sandbox));
    expect(callerScope(from("2001:db8:1:2::1"), sandbox)).toBe(callerScope(from("2001:db8:1:2::99"), sandbox));
    expect(callerScope(from("203.0.113.7"), personal)).toBe(callerScope(from("198.51.100.7"), personal));
  });

  it("validates the key: 1-255 printable ASCII", async () => {
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    for (const bad of ["x".repeat(256), "tab\there"]) {
      const res = await post(body, bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", param: "Idempotency-Key" });
    }
    expect((await post(body, "x".repeat(255))).status).toBe(200);
  });

  it("does the work once under concurrent duplicates (within the key's burst of 20)", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const body = { numbers: ["+12025550101", "+12025550102"], checks: ["spam", "whatsapp"] };
    const responses = await Promise.all(Array.from({ length: 18 }, () => post(body, "burst", own.key)));
    const ok = responses.filter((r) => r.status === 200);
    const busy = responses.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(18);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    for (const r of busy) expect(r.body.error.code).toBe("idempotency_request_in_progress");
    expect(await lookupsOf(own.accountId)).toBe(1);
  });

  it("lets a retry take over after the first request died, and starts afresh after 24 hours", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    const first = await post(body, "day-old", own.key);
    gw.setNow(new Date(Date.now() + 24 * 3600 * 1000 + 1000));
    try {
      const later = await post({ numbers: ["+12025550101"], checks: ["spam"] }, "day-old", own.key);
      expect(later.status).toBe(200);
      expect(later.body.id).not.toBe(first.body.id);
    } finally {
      gw.setNow(null);
    }
    // A claim left "in progress" by a crashed request is taken over once its lock lapses.
    const hash = createHash("sha256").update(`POST /v1/lookup\n${canonicalJson(body)}`).digest("hex");
    const orphan = (key: string, lockedFor: string) =>
      gw.store.pool.query(
        `INSERT INTO idempotency_records (account_id, caller_scope, key, request_hash, state, locked_until, expires_at) VALUES ($1, $2, $3, $4, 'in_progress', now() + $5::interval, now() + interval '1 day')`,
        [own.accountId, own.keyId, key, hash, lockedFor],
      );
    await orphan("crashed", "-1 second");
    expect((await post(body, "crashed", own.key)).status).toBe(200);
    await orphan("still-running", "1 minute");
    expect((await post(body, "still-running", own.key)).body.error.code).toBe("idempotency_request_in_progress");
  });

  it("gives a claim taken over by a retry to the new owner only: the old owner can neither bind a resource nor store its answer", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const scope = { accountId: own.accountId, callerScope: own.keyId, key: "slow" };
    const t0 = new Date();
    const first = await claimIdempotencyKey(gw.store.pool, { ...scope, requestHash: "h", now: t0, lockMs: 60_000, ttlMs: 86_400_000 });
    expect(first.kind).toBe("claimed");
    // Still locked: a retry waits.
    expect((await claimIdempotencyKey(gw.store.pool, { ...scope, requestHash: "h", now: new Date(t0.getTime() + 1_000), lockMs: 60_000, ttlMs: 86_400_000 })).kind).toBe("in_progress");
    // The first request overran its lock; the retry takes over.
    const second = await claimIdempotencyKey(gw.store.pool, { ...scope, requestHash: "h", now: new Date(t0.getTime() + 61_000), lockMs: 60_000, ttlMs: 86_400_000 });
    expect(second.kind).toBe("claimed");
    if (first.kind !== "claimed" || second.kind !== "claimed") throw new Error("unreachable");
    expect(await bindIdempotentResource(gw.store.pool, first.claim, "lkp_old")).toBe(false);
    expect(await bindIdempotentResource(gw.store.pool, second.claim, "lkp_new")).toBe(true);
    await completeIdempotencyKey(gw.store.pool, first.claim, { status: 500, headers: {}, body: Buffer.from("null") });
    const { rows } = await gw.store.pool.query(`SELECT state, resource_id FROM idempotency_records WHERE account_id = $1`, [own.accountId]);
    expect(rows).toEqual([{ state: "in_progress", resource_id: "lkp_new" }]);
  });

  it("purges only expired records: another key's live record with the same key string stays", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const sibling = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: own.accountId });
    const insert = (callerScope: string, expires: string) =>
      gw.store.pool.query(
        `INSERT INTO idempotency_records (account_id, caller_scope, key, request_hash, state, locked_until, expires_at, resource_id)
         VALUES ($1, $2, 'same', 'h', 'in_progress', now() + interval '1 minute', now() + $3::interval, 'lkp_x')`,
        [own.accountId, callerScope, expires],
      );
    await insert(own.keyId, "-1 second");
    await insert(sibling.keyId, "1 day");
    await purgeExpired(gw.store.pool, new Date());
    const { rows } = await gw.store.pool.query(`SELECT caller_scope FROM idempotency_records WHERE account_id = $1`, [own.accountId]);
    expect(rows).toEqual([{ caller_scope: sibling.keyId }]);
  });

  it("answers a retry after a failure past the insert with the test lookup already made, not a second one", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    const first = await post(body, "test-crash", own.key);
    expect(first.status).toBe(200);
    // What a gateway that died after storing the lookup leaves: the claim in progress, its lock lapsed, the lookup bound.
    await gw.store.pool.query(
      `UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_headers = NULL, response_body = NULL, locked_until = now() - interval '1 second' WHERE account_id = $1`,
      [own.accountId],
    );
    const retry = await post(body, "test-crash", own.key);
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.body.results[0].input).toBe("+12025550100");
    expect(await lookupsOf(own.accountId)).toBe(1);
  });
});
