import { startServiceOps, type WorkerContext } from "@svc/service-runner";
import { createConsumer, createRedis, Producer, waitForRedis, watchQueue } from "@svc/queues";
import { createLogger } from "@svc/process";
import {
  createEndpoint,
  createStore,
  oldestDueSettlementSeconds,
  planEvent,
  reconcileAllAccounts,
  recordAttempt,
  recordEvent,
  recordTestEvent,
  withTransaction,
  type Store,
} from "@svc/store";
import { exposition, metrics } from "@svc/metrics";
import type { Redis } from "ioredis";
import { ledgerMetrics } from "../../services/billing-ledger/src/settle";
import { dispatcherMetrics } from "../../services/webhook-dispatcher/src/dispatcher";
import { createTestEnv, tagged, testFleet, type TestEnv } from "../support/env";
import { accountWithKey } from "../support/fixtures";
import { deleteKeysUnder } from "../support/redis-keys";
import { freePort, parseExposition, PrivateRedis, until } from "./support";

/**
 * The figures computed from Redis and Postgres when scraped, against the real
 * servers (in this process: each piece on its own, with states a fleet rarely
 * holds still long enough to look at).
 */
let env: TestEnv;
let store: Store;
let redis: Redis;
let producer: Producer;

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  redis = createRedis(env.redisUrl, "producer", "gauges-test");
  await waitForRedis(redis);
  producer = new Producer(redis, testFleet(env));
});
afterAll(async () => {
  await producer.close();
  await deleteKeysUnder(env.redisUrl, env.redisPrefix);
  await redis.quit();
  await store.close();
});

const read = async (name: string, labels: Record<string, string> = {}) =>
  parseExposition((await exposition()).body)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .map((s) => s.value);

describe("queue gauges (BullMQ, read when scraped)", () => {
  it("count waiting and delayed messages, and age the oldest waiting one from when it became ready", async () => {
    watchQueue(producer.queue("settlements"), redis);
    expect(await read("svc_queue_messages", { queue: "settlements", state: "waiting" })).toEqual([0]);
    expect(await read("svc_queue_oldest_waiting_age_seconds", { queue: "settlements" })).toEqual([0]);

    for (let i = 0; i < 3; i += 1) await producer.enqueue("settle.reservation", { reservationId: `rsv_gauge${i}0000000` }, { jobId: `g-${i}` });
    await producer.enqueue("settle.reservation", { reservationId: "rsv_gaugedelayed00" }, { jobId: "g-delayed", delayMs: 60_000 });
    // The first message was created two minutes ago; the delayed one became ready just now after a two-minute delay.
    const q = producer.queue("settlements");
    await redis.hset(q.toKey("g-0"), "timestamp", String(Date.now() - 120_000));
    await new Promise((r) => setTimeout(r, 5_100)); // past the gauges' 5 s cache
    expect(await read("svc_queue_messages", { queue: "settlements", state: "waiting" })).toEqual([3]);
    expect(await read("svc_queue_messages", { queue: "settlements", state: "delayed" })).toEqual([1]);
    const [age] = await read("svc_queue_oldest_waiting_age_seconds", { queue: "settlements" });
    expect(age).toBeGreaterThanOrEqual(119);
    expect(age).toBeLessThan(130);

    // Only the delayed message is left, made ready (promoted) after waiting out its delay.
    for (const id of ["g-0", "g-1", "g-2"]) await (await q.getJob(id))?.remove();
    await redis.hset(q.toKey("g-delayed"), "timestamp", String(Date.now() - 60_000));
    await q.promoteJobs();
    await new Promise((r) => setTimeout(r, 5_100));
    expect(await read("svc_queue_messages", { queue: "settlements", state: "waiting" })).toEqual([1]);
    const [promoted] = await read("svc_queue_oldest_waiting_age_seconds", { queue: "settlements" });
    // Counted from creation it would be 60 s; it has been ready for moments only.
    expect(promoted).toBeLessThan(10);
  }, 30_000);

  it("count the messages a consumer is running (active) and those it gave up on (failed)", async () => {
    const prefix = `${env.redisPrefix}:consumed`;
    const own = new Producer(redis, testFleet(env, prefix));
    const q = own.queue("checks");
    const workerRedis = createRedis(env.redisUrl, "worker", "gauges-test-worker");
    let release = () => undefined as void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const idle = async () => undefined;
    const worker = createConsumer("checks", { "lookup.complete-test": () => gate, "lookup.run": idle, "job.chunk": idle }, { connection: workerRedis, fleet: testFleet(env, prefix), concurrency: 2, onError: () => undefined });
    try {
      await own.enqueue("lookup.complete-test", { lookupId: "lkp_GaugeActive0001" }, { jobId: "active-1" });
      // A payload outside the catalog's schema: the consumer fails it once, for good.
      await q.add("lookup.run", tagged(env, "checks", "lookup.run", { lookupId: "not-an-id" }), { jobId: "bad-1", attempts: 3 });
      const running = worker.run();
      await until("one active, one failed", async () => {
        const c = await q.getJobCounts("active", "failed");
        return c.active === 1 && c.failed === 1;
      });
      // Watched only now, so the first read is fresh (no 5 s cache to wait out).
      watchQueue(q, redis);
      expect(await read("svc_queue_messages", { queue: "checks", state: "active" })).toEqual([1]);
      expect(await read("svc_queue_messages", { queue: "checks", state: "failed" })).toEqual([1]);
      expect(await read("svc_queue_messages", { queue: "checks", state: "waiting" })).toEqual([0]);
      expect(await read("svc_queue_oldest_waiting_age_seconds", { queue: "checks" })).toEqual([0]);
      expect(await read("svc_queue_jobs_processed_total", { queue: "checks", name: "lookup.run", outcome: "error" })).toEqual([1]);
      release();
      await worker.close();
      await running;
      expect(await read("svc_queue_jobs_processed_total", { queue: "checks", name: "lookup.complete-test", outcome: "ok" })).toEqual([1]);
    } finally {
      release();
      await worker.close();
      await workerRedis.quit();
    }
  }, 20_000);

  it("drop the queue's series while Redis cannot be read, instead of showing stale figures", async () => {
    const own = new PrivateRedis(await freePort());
    await own.start();
    const conn = createRedis(own.url, "producer", "gauges-test-own");
    try {
      await waitForRedis(conn);
      watchQueue(new Producer(conn, testFleet(env)).queue("webhooks"), conn);
      expect(await read("svc_queue_messages", { queue: "webhooks", state: "waiting" })).toEqual([0]);
      await own.stop();
      await new Promise((r) => setTimeout(r, 5_100));
      expect(await read("svc_queue_messages", { queue: "webhooks" })).toEqual([]);
      expect(await read("svc_queue_oldest_waiting_age_seconds", { queue: "webhooks" })).toEqual([]);
    } finally {
      conn.disconnect();
      await own.stop();
    }
  }, 20_000);
});

describe("ledger figures (Postgres)", () => {
  it("the lag: how long the oldest due settlement has waited, 0 when none is due", async () => {
    const now = new Date();
    expect(await oldestDueSettlementSeconds(store.pool, now)).toBe(0);
    const k = await accountWithKey(store, env.keyHashSecret, { mode: "live" });
    const insert = (id: string, expiresAt: Date) =>
      store.pool.query(`INSERT INTO reservations (id, account_id, api_key_id, amount_micros, unit_prices, day, expires_at) VALUES ($1, $2, $3, 1000, '{}', CURRENT_DATE, $4)`, [id, k.accountId, k.keyId, expiresAt]);
    // Open but not due yet (expires later, no finished work): no lag.
    await insert("rsv_notdueyet000001", new Date(now.getTime() + 3_600_000));
    expect(await oldestDueSettlementSeconds(store.pool, now)).toBe(0);
    // Expired 90 s ago and still open: the ledger is 90 s behind.
    await insert("rsv_expiredlong0001", new Date(now.getTime() - 90_000));
    expect(Math.round(await oldestDueSettlementSeconds(store.pool, now))).toBe(90);
    await store.pool.query(`UPDATE reservations SET status = 'closed' WHERE id = 'rsv_expiredlong0001'`);
    expect(await oldestDueSettlementSeconds(store.pool, now)).toBe(0);
    await store.pool.query(`DELETE FROM reservations WHERE account_id = $1`, [k.accountId]);
  });

  it("the imbalance: what `admin ledger reconcile` finds, summed over every account", async () => {
    expect(await reconcileAllAccounts(store.pool)).toEqual({ imbalanceMicros: 0n, unbalancedAccounts: 0 });
    const a = await accountWithKey(store, env.keyHashSecret, { mode: "live", balanceMicros: 5_000_000n });
    const b = await accountWithKey(store, env.keyHashSecret, { mode: "live", balanceMicros: 5_000_000n });
    expect(await reconcileAllAccounts(store.pool)).toEqual({ imbalanceMicros: 0n, unbalancedAccounts: 0 });
    await store.pool.query(`UPDATE accounts SET balance_micros = balance_micros - 700 WHERE id = $1`, [a.accountId]);
    await store.pool.query(`UPDATE accounts SET reserved_micros = reserved_micros + 300 WHERE id = $1`, [b.accountId]);
    expect(await reconcileAllAccounts(store.pool)).toEqual({ imbalanceMicros: 1000n, unbalancedAccounts: 2 });
    await store.pool.query(`UPDATE accounts SET balance_micros = balance_micros + 700 WHERE id = $1`, [a.accountId]);
    await store.pool.query(`UPDATE accounts SET reserved_micros = reserved_micros - 300 WHERE id = $1`, [b.accountId]);
  });
});

describe("the Postgres pool", () => {
  it("shows connections in use (total - idle) and requests waiting for one", async () => {
    const small = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
    const ops = await startServiceOps({
      service: "gauges-test",
      config: { DATABASE_URL: env.databaseUrl, METRICS_PORT: 0, METRICS_HOST: "127.0.0.1" },
      logger: createLogger("gauges-test", "silent"),
      store: small,
      redis: [],
      checks: [],
      draining: () => false,
    });
    const pool = async () => {
      const s = parseExposition((await exposition()).body).filter((x) => x.name === "svc_db_pool_connections");
      return Object.fromEntries(s.map((x) => [x.labels.state, x.value]));
    };
    try {
      expect(await pool()).toEqual({ total: 0, idle: 0, waiting: 0 });
      const a = await small.pool.connect();
      const b = await small.pool.connect();
      const third = small.pool.connect();
      expect(await pool()).toEqual({ total: 2, idle: 0, waiting: 1 });
      a.release();
      const c = await third;
      expect(await pool()).toEqual({ total: 2, idle: 0, waiting: 0 });
      b.release();
      c.release();
      expect(await pool()).toEqual({ total: 2, idle: 2, waiting: 0 });
    } finally {
      await ops.close();
      await small.close();
    }
  });
});

describe("figures read from Postgres when scraped (cached 10 s)", () => {
  it("webhook deliveries held, pending and failed, and the ledger's lag", async () => {
    const ctx: WorkerContext = { logger: createLogger("gauges-test", "silent"), store, redis, producer, prefix: env.redisPrefix, fleet: testFleet(env), now: () => new Date() };
    dispatcherMetrics(store);
    ledgerMetrics(ctx);
    for (const state of ["pending", "held", "failed"]) expect(await read("svc_webhook_deliveries", { state })).toEqual([0]);
    expect(await read("svc_ledger_oldest_unsettled_seconds")).toEqual([0]);

    const k = await accountWithKey(store, env.keyHashSecret, { mode: "live" });
    const owner = { accountId: k.accountId, livemode: true };
    const now = new Date();
    // A new endpoint, not verified yet: its challenge is pending, a lookup event for it is held.
    const created = await withTransaction(store.pool, (c) =>
      createEndpoint(c, { ...owner, url: "https://hooks.example.test/in", events: ["lookup.completed"], secretEncrypted: Buffer.from("unused"), now }),
    );
    if (created === "limit_reached") throw new Error("endpoint limit reached");
    expect(await planEvent(store.pool, created.eventId, now, 30_000)).toHaveLength(1);
    const held = await recordEvent(store.pool, { ...owner, type: "lookup.completed", data: {}, endpointId: null, createdAt: now });
    expect(await planEvent(store.pool, held, now, 30_000)).toEqual([]);
    // A test event goes out at once; its attempt fails and no retry is left: failed.
    const tested = await recordTestEvent(store.pool, owner, created.endpoint.id, now);
    const [task] = (await planEvent(store.pool, tested, now, 30_000)) ?? [];
    if (!task) throw new Error("the test event was not planned");
    await recordAttempt(store.pool, { deliveryId: task.delivery_id, attemptNo: 1, startedAt: now, durationMs: 5, statusCode: 500, error: "http_error", succeeded: false, retryAt: null, now });
    // An open reservation that expired 90 s ago: the ledger is 90 s behind.
    await store.pool.query(
      `INSERT INTO reservations (id, account_id, api_key_id, amount_micros, unit_prices, day, expires_at) VALUES ('rsv_gaugelag000001', $1, $2, 1000, '{}', CURRENT_DATE, $3)`,
      [k.accountId, k.keyId, new Date(now.getTime() - 90_000)],
    );

    await new Promise((r) => setTimeout(r, 10_100)); // past the 10 s cache
    expect(await read("svc_webhook_deliveries", { state: "pending" })).toEqual([1]);
    expect(await read("svc_webhook_deliveries", { state: "held" })).toEqual([1]);
    expect(await read("svc_webhook_deliveries", { state: "failed" })).toEqual([1]);
    const [lag] = await read("svc_ledger_oldest_unsettled_seconds");
    expect(lag).toBeGreaterThanOrEqual(99);
    expect(lag).toBeLessThan(115);
    await store.pool.query(`DELETE FROM reservations WHERE account_id = $1`, [k.accountId]);
  }, 25_000);
});

/** Every figure the issue asks for, by name: a dashboard, an alert or a KEDA trigger reads each. */
const CATALOG = [
  // RED per route template
  "svc_http_requests_total",
  "svc_http_request_duration_seconds",
  // per queue: depth by state, oldest waiting message, work done
  "svc_queue_messages",
  "svc_queue_oldest_waiting_age_seconds",
  "svc_queue_jobs_processed_total",
  "svc_queue_job_duration_seconds",
  // per check and source
  "svc_check_answers_total",
  "svc_source_request_duration_seconds",
  "svc_source_breaker_open",
  "svc_source_retries_total",
  "svc_source_failovers_total",
  // money
  "svc_reservations_total",
  "svc_reserved_micros_total",
  "svc_settlements_total",
  "svc_settled_micros_total",
  "svc_ledger_oldest_unsettled_seconds",
  "svc_ledger_imbalance_micros",
  "svc_ledger_unbalanced_accounts",
  "svc_ledger_reconciled_timestamp_seconds",
  // webhooks
  "svc_webhook_attempts_total",
  "svc_webhook_delivery_duration_seconds",
  "svc_webhook_deliveries",
  // Postgres pool, bulk intake
  "svc_db_pool_connections",
  "svc_bulk_intake_tasks",
  "svc_bulk_intake_refused_total",
];

describe("the catalog", () => {
  it("holds every figure the issue names, each with the fleet's prefix and Prometheus' suffix rules", async () => {
    // Metrics are registered on first use (a service exports only what it uses), and a
    // labelled metric with no series yet has only its HELP and TYPE lines: read those.
    for (const make of Object.values(metrics)) make();
    const typed = (await exposition()).body
      .split("\n")
      .filter((l) => l.startsWith("# TYPE svc_"))
      .map((l) => l.split(" "));
    const names = typed.map(([, , name]) => name as string);
    expect(names).toEqual(expect.arrayContaining(CATALOG));
    expect(new Set(names).size).toBe(names.length);
    for (const [, , name, type] of typed) {
      expect(name).toMatch(/^svc_[a-z_]+$/);
      if (type === "counter") expect(name).toMatch(/_total$/);
      else expect(name).not.toMatch(/_total$/);
      if (type === "histogram") expect(name).toMatch(/_seconds$/);
    }
  });
});
