import type { CheckResult } from "@svc/domain";
import { lookupAnswerText, publishCompletion } from "@svc/queues";
import { claimLiveLookupWithRows, completeLiveLookupAlone, createStore, type Store } from "@svc/store";
import type { PoolClient } from "pg";
import type { Response } from "supertest";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";
import { routesKey } from "@svc/sources";

/**
 * A waited live lookup is answered from its completion notice, which carries the
 * checks as the worker's completing statement stored them: the reply is the one a
 * read of the lookup gives, and any notice that does not fit (or no notice at all)
 * leaves the request reading Postgres as before.
 */

const someNumbers = spacedNumbers(53);

/** The later GET's body, bearing the creating request's raw inputs (a read shows them masked), as the JSON text the gateway sends. */
async function readBackText(gw: TestGateway, key: string, created: Response): Promise<string> {
  const read = await gw.http().get(`/v1/lookups/${created.body.id}`).set(bearer(key));
  expect(read.status).toBe(200);
  const body = JSON.parse(read.text) as { results: Array<{ input: string }> };
  body.results.forEach((r, i) => (r.input = created.body.results[i].input));
  return JSON.stringify(body);
}

/** The id of the account's one lookup, once the request creating it waits for its notice. */
async function waitingLookup(gw: TestGateway, accountId: string): Promise<string> {
  const id = await eventually(async () => (await gw.store.pool.query<{ id: string }>(`SELECT id FROM lookups WHERE account_id = $1`, [accountId])).rows[0]?.id, 10_000, "lookup stored");
  await eventually(async () => gw.deps.waiter.size > 0, 10_000, "request waiting");
  return id;
}

describe("a waited live lookup answered from its completion notice", () => {
  let gw: TestGateway;
  let live: LiveWorkers;
  let k: TestKey;

  beforeAll(async () => {
    gw = await startTestGateway();
    live = await startLiveWorkers(gw.env);
    await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
  });
  beforeEach(async () => {
    k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    live.sim.settings.latencyMs = 0;
  });
  afterAll(async () => {
    await live?.stop();
    await gw?.close();
  });

  it("answers 200 with the very bytes a later read gives (invalid and repeated numbers included)", async () => {
    const [a, b] = someNumbers(2) as [string, string];
    const created = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: [a, "12", b, a], checks: ["whatsapp", "carrier"], wait: 10 });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("completed");
    expect(created.body.results.map((r: { input: string }) => r.input)).toEqual([a, "12", b, a]);
    expect(created.text).toBe(await readBackText(gw, k.key, created));
  });

  it("answers a lookup with nothing to ask a source at once, with what a later read gives", async () => {
    // Every row invalid: stored completed, nothing enqueued to a worker, answered from
    // what it stored (the check objects' key order is the request's, not jsonb's).
    const created = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: ["12", "+999"], checks: ["whatsapp"], wait: 10 });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("completed");
    expect(created.body).toEqual(JSON.parse(await readBackText(gw, k.key, created)));
  });

  it("answers without reading the lookup back: 200 while the gateway cannot reach Postgres", async () => {
    // The worker waits at the vendor while this test holds every connection of the
    // gateway's pool; a read-back would wait for one and fail after the pool's 5 s.
    live.sim.settings.latencyMs = 1_000;
    const creating = gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 10 }).then((r) => r);
    await waitingLookup(gw, k.accountId);
    const poolSize = (gw.store.pool as unknown as { options: { max: number } }).options.max;
    const held: PoolClient[] = await Promise.all(Array.from({ length: poolSize }, () => gw.store.pool.connect()));
    let created: Response;
    try {
      created = await creating;
    } finally {
      for (const c of held) c.release();
    }
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("completed");
    expect(created.text).toBe(await readBackText(gw, k.key, created));
  });
});

describe("notices that carry no usable answer", () => {
  // No check-worker: this test plays its part, so nothing but the test completes or announces a lookup.
  let gw: TestGateway;
  let store: Store;
  let k: TestKey;

  beforeAll(async () => {
    gw = await startTestGateway();
    store = createStore({ databaseUrl: gw.env.databaseUrl, poolSize: 2, applicationName: "notice-test-worker" });
  });
  beforeEach(async () => {
    k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
  });
  afterAll(async () => {
    await store?.close();
    await gw?.close();
  });

  /** What a check-worker's run commits: every pending check answered `ok`, by the one-statement completion. */
  async function completeAsWorker(id: string): Promise<NonNullable<Awaited<ReturnType<typeof completeLiveLookupAlone>>>> {
    const claim = await claimLiveLookupWithRows(store.pool, id, new Date(), 30_000);
    if (!claim) throw new Error("not claimed");
    const checkedAt = new Date().toISOString();
    const answered = claim.rows.map((r) => ({
      row_no: r.row_no,
      checks: r.checks.map((c): CheckResult => (c.status === "pending" ? { service: c.service, status: "ok", registered: true, attributes: { business: false }, cached: false, billed: true, checked_at: checkedAt } : c)),
    }));
    const done = await completeLiveLookupAlone(store.pool, id, answered, new Date(), claim.attempts);
    if (!done) throw new Error("not completed");
    return done;
  }

  it("a worker that died after its commit, before its notice: the request answers from Postgres at its deadline", async () => {
    const creating = gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 2 }).then((r) => r);
    const id = await waitingLookup(gw, k.accountId);
    await completeAsWorker(id); // and no notice
    const created = await creating;
    expect(created.status).toBe(200);
    expect(created.body.status).toBe("completed");
    expect(created.body.results[0].checks[0]).toMatchObject({ service: "whatsapp", status: "ok", registered: true });
    expect(created.text).toBe(await readBackText(gw, k.key, created));
  });

  it("answers carried for another lookup, or not fitting the request's rows, are never used", async () => {
    const other = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const theirs = await gw.http().post("/v1/lookup").set(bearer(other.key)).send({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 0 });
    expect(theirs.status).toBe(202);

    const creating = gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: someNumbers(2), checks: ["whatsapp"], wait: 2 }).then((r) => r);
    const mine = await waitingLookup(gw, k.accountId);
    // Answers that would complete a lookup of two rows, if they were taken.
    const forged = (rows: number[]) =>
      lookupAnswerText(new Date(), rows.map((n) => ({ row_no: n, checks: [{ service: "whatsapp", status: "ok", registered: true, attributes: { business: true }, cached: false, billed: true, checked_at: new Date().toISOString() }] })));
    const publish = (id: string, answer: string) => publishCompletion(gw.deps.redis, gw.deps.fleet, id, answer);
    await publish(theirs.body.id, forged([1, 2])); // another account's lookup
    await publish("lkp_NoSuchLookup0000000000", forged([1, 2])); // nobody's
    await publish(mine, forged([1])); // this request's, but not its rows
    await publish(mine, "{not json");
    const created = await creating;
    // Still pending in Postgres: the request answered 202 from its read, with its own rows.
    expect(created.status).toBe(202);
    expect(created.body.status).toBe("pending");
    expect(created.body.results.map((r: { checks: Array<{ status: string }> }) => r.checks[0]?.status)).toEqual(["pending", "pending"]);

    // A read held by GET ?wait wakes on a notice but answers from Postgres, never from what the notice carried.
    const reading = gw.http().get(`/v1/lookups/${theirs.body.id}?wait=2`).set(bearer(other.key)).then((r) => r);
    await eventually(async () => gw.deps.waiter.size > 0, 10_000, "read waiting");
    await publish(theirs.body.id, forged([1, 2]));
    const read = await reading;
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("pending");
    expect(read.body.results.map((r: { checks: Array<{ status: string }> }) => r.checks[0]?.status)).toEqual(["pending", "pending"]);
  });
});
