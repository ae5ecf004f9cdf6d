import { newId } from "@svc/domain";
import { insertTestLookups, type NewLookup } from "@svc/store";
import { testLookupWriter } from "../../services/gateway/src/lookups/test-batch";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

// Test lookups without an Idempotency-Key are group-committed: concurrent ones are
// written together in one statement (lookups, rows, and usage summed per key and day).

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

const today = () => new Date().toISOString().slice(0, 10);

/** The i-th of a mix of bodies: one number; numbers and e-mails over two checks; a pending test value. */
function body(i: number): Record<string, unknown> {
  const n = `+1212555${String(1000 + i).padStart(4, "0")}`;
  if (i % 5 === 0) return { numbers: ["+12025550107", n], checks: ["spam"], wait: 0 };
  if (i % 3 === 0) return { numbers: [n, "garbage"], emails: ["deliverable@example.com"], checks: ["spam", "email"] };
  return { numbers: [n], checks: ["spam", "whatsapp"] };
}

const post = (key: TestKey, b: Record<string, unknown>) => gw.http().post("/v1/lookup").set(bearer(key.key)).send(b);

/** The account's daily_usage rows, with each key named by its position in `keys`. */
async function usageRows(accountId: string, keys: TestKey[]) {
  const { rows } = await gw.store.pool.query(
    `SELECT api_key_id, check_code, identifiers, checks, conclusive FROM daily_usage WHERE account_id = $1 ORDER BY api_key_id, check_code`,
    [accountId],
  );
  return rows
    .map((r) => ({ ...r, api_key_id: keys.findIndex((k) => k.keyId === r.api_key_id) }))
    .sort((a, b) => a.api_key_id - b.api_key_id || a.check_code.localeCompare(b.check_code));
}

describe("concurrent test lookups", () => {
  it("are all stored with their own rows, and usage counts exactly what one-at-a-time lookups count", async () => {
    const concurrent = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const concurrentKeys = [concurrent, await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: concurrent.accountId })];
    const sequential = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const sequentialKeys = [sequential, await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: sequential.accountId })];
    // 20 a key: the rate limiter's burst.
    const bodies = Array.from({ length: 20 }, (_, i) => body(i));

    const created = await Promise.all(concurrentKeys.flatMap((k) => bodies.map((b) => post(k, b))));
    for (const k of sequentialKeys) for (const b of bodies) expect((await post(k, b)).status).toBeLessThan(300);

    expect(created.map((r) => r.status).sort()).toEqual([...Array(32).fill(200), ...Array(8).fill(202)]);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(40);
    // Read back with fresh keys of the account, 20 reads each (the limiter's burst).
    let reader = concurrent;
    for (const [i, res] of created.entries()) {
      if (i % 20 === 0) reader = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: concurrent.accountId });
      const read = await gw.http().get(`/v1/lookups/${res.body.id}`).set(bearer(reader.key));
      expect(read.status).toBe(200);
      expect(read.body.results.map((r: { e164: string | null; email: string | null }) => r.e164 ?? r.email)).toEqual(
        res.body.results.map((r: { e164: string | null; email: string | null }) => r.e164 ?? r.email),
      );
    }

    const expected = await usageRows(sequential.accountId, sequentialKeys);
    expect(expected.length).toBeGreaterThan(0);
    expect(await usageRows(concurrent.accountId, concurrentKeys)).toEqual(expected);
    // What the user sees: 2 keys × (4 pending bodies × 2 numbers + 5 × 3 rows + 11 × 1) identifiers.
    const account = await gw.http().get("/v1/account").set(bearer(concurrent.key));
    expect(account.body.today.identifiers).toBe(2 * (4 * 2 + 5 * 3 + 11));
    const usage = await gw.http().get(`/v1/usage?from=${today()}&to=${today()}&group_by=check`).set(bearer(concurrent.key));
    const sequentialUsage = await gw.http().get(`/v1/usage?from=${today()}&to=${today()}&group_by=check`).set(bearer(sequential.key));
    expect(usage.body.data).toEqual(sequentialUsage.body.data);
    expect(usage.body.data.map((r: { service: string; checks: number }) => [r.service, r.checks])).toEqual([
      ["email", 2 * 5],
      ["number.spam", 2 * (4 * 2 + 5 * 2 + 11)],
      ["whatsapp", 2 * 11],
    ]);
  });

  it("answers a lone lookup on an idle gateway as before", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const created = await post(k, { numbers: ["+12025550101"], checks: ["spam"] });
    expect(created.status).toBe(200);
    const read = await gw.http().get(`/v1/lookups/${created.body.id}`).set(bearer(k.key));
    expect(read.body).toMatchObject({ id: created.body.id, status: "completed", results: [{ e164: "+12025550101" }] });
  });
});

describe("the group-commit writer", () => {
  /** A completed one-number test lookup of `key`, counted in its usage. */
  function lookup(key: TestKey, id = newId("lookup")): NewLookup {
    const now = new Date();
    return {
      id,
      accountId: key.accountId,
      apiKeyId: key.keyId,
      livemode: false,
      status: "completed",
      checks: ["number.spam"],
      checksTotal: 1,
      webhookEndpointId: null,
      requestId: newId("request"),
      createdAt: now,
      completedAt: now,
      completesAt: null,
      expiresAt: new Date(now.getTime() + 86_400_000),
      rows: [
        {
          row_no: 1,
          kind: "number",
          input_masked: "+1 20* *** **01",
          e164: "+12025550101",
          country: "US",
          number_status: "valid",
          email: null,
          email_status: null,
          checks: [{ service: "number.spam", status: "ok", registered: true, attributes: null, cached: false, billed: false, checked_at: now.toISOString() }],
        },
      ],
      usage: { day: today(), checks: [{ check: "number.spam", checks: 1, conclusive: 1 }], identifiers: 1 },
    };
  }

  const stored = async (ids: string[]) =>
    (await gw.store.pool.query<{ id: string; xmin: string }>(`SELECT id, xmin::text FROM lookups WHERE id = ANY($1)`, [ids])).rows;
  const spamUsage = async (key: TestKey) =>
    (await gw.store.pool.query(`SELECT identifiers, checks, conclusive FROM daily_usage WHERE api_key_id = $1 AND check_code IN ('*', 'number.spam') ORDER BY check_code`, [key.keyId])).rows;

  it("sends the first writes at once and the ones that arrive meanwhile in one statement", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const writer = testLookupWriter(gw.store);
    const lookups = Array.from({ length: 20 }, () => lookup(k));
    await Promise.all(lookups.map((l) => writer.add(l)));
    const rows = await stored(lookups.map((l) => l.id));
    expect(rows).toHaveLength(20);
    // Two go out alone (two writes in flight), the other 18 wait and commit together.
    expect(new Set(rows.map((r) => r.xmin)).size).toBe(3);
    expect(await spamUsage(k)).toEqual([
      { identifiers: 20, checks: 0, conclusive: 0 },
      { identifiers: 0, checks: 20, conclusive: 20 },
    ]);
  });

  it("stores every other lookup of a batch when one of them cannot be stored", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const writer = testLookupWriter(gw.store);
    const existing = lookup(k);
    await writer.add(existing);
    // One statement is all or nothing: the batch with a taken id stores none of its lookups.
    const [c, d] = [lookup(k), lookup(k)];
    await expect(insertTestLookups(gw.store.pool, [c, lookup(k, existing.id), d])).rejects.toMatchObject({ code: "23505" });
    expect(await stored([c.id, d.id])).toEqual([]);

    // Through the writer: a and b go out alone, [c, the duplicate, d] as one batch that fails.
    const [a, b] = [lookup(k), lookup(k)];
    const results = await Promise.allSettled([a, b, c, lookup(k, existing.id), d].map((l) => writer.add(l)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({ code: "23505" });
    expect((await stored([a.id, b.id, c.id, d.id])).length).toBe(4);
    for (const l of [c, d]) {
      const read = await gw.http().get(`/v1/lookups/${l.id}`).set(bearer(k.key));
      expect(read.body).toMatchObject({ id: l.id, status: "completed", results: [{ e164: "+12025550101" }] });
    }
    // Counted once each: the existing lookup and a–d, not the duplicate.
    expect(await spamUsage(k)).toEqual([
      { identifiers: 5, checks: 0, conclusive: 0 },
      { identifiers: 0, checks: 5, conclusive: 5 },
    ]);
  });

  it("drains: every queued lookup is stored before drain resolves", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const writer = testLookupWriter(gw.store);
    const lookups = Array.from({ length: 30 }, () => lookup(k));
    const settled = Promise.allSettled(lookups.map((l) => writer.add(l)));
    await writer.drain();
    expect(await stored(lookups.map((l) => l.id))).toHaveLength(30);
    expect((await settled).every((r) => r.status === "fulfilled")).toBe(true);
    await writer.drain(); // nothing in flight: at once
  });
});
