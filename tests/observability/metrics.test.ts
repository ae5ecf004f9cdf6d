import request from "supertest";
import { DEFAULT_SCOPES } from "@svc/domain";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { createTestCertificates, LOOPBACK, WebhookReceiver } from "../support/webhooks";
import { freePort, probe, scrape, until, type Sample, type Scrape } from "./support";

/**
 * Every service as a real process with its operations port, scraped over HTTP as
 * Prometheus would: the figures move when a live lookup, a job chunk, a settlement
 * and a webhook delivery happen, failing data sources show as retries, failovers
 * and an open breaker, and no label ever carries an identifier, a number, an
 * address or a raw path.
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let env: TestEnv;
let store: Store;
let live: TestKey;
let primary: Simulator;
let secondary: Simulator;
const svc: Record<"gateway" | "worker" | "ledger" | "dispatcher", { process: RunningService; ops: number }> = {} as never;

const MANAGE = [...DEFAULT_SCOPES, "webhooks:manage" as const];

beforeAll(async () => {
  await receiver.start();
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  live = await accountWithKey(store, env.keyHashSecret, { mode: "live", scopes: MANAGE, balanceMicros: 50_000_000n });
  [primary, secondary] = await Promise.all([startSimulator(), startSimulator()]);
  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const ops = (i: number) => ({ METRICS_PORT: String(ports[i]), METRICS_HOST: "127.0.0.1" });
  const [gateway, worker, ledger, dispatcher] = await Promise.all([
    startService("gateway", env, { PORT: "0", WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, ...ops(0) }),
    startService("check-worker", env, {
      VENDOR_PRIMARY_URL: primary.url,
      VENDOR_PRIMARY_KEY: "sim-key",
      VENDOR_SECONDARY_URL: secondary.url,
      VENDOR_SECONDARY_KEY: "sim-key",
      VENDOR_RETRIES: "1",
      SWEEP_INTERVAL_MS: "500",
      ...ops(1),
    }),
    startService("billing-ledger", env, { SWEEP_INTERVAL_MS: "500", LEDGER_RECONCILE_INTERVAL_MS: "1000", ...ops(2) }),
    startService("webhook-dispatcher", env, {
      WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK,
      WEBHOOK_EXTRA_CA_FILE: certs.caFile,
      WEBHOOK_TIMEOUT_MS: "1500",
      SWEEP_INTERVAL_MS: "300",
      SWEEP_GRACE_MS: "500",
      ...ops(3),
    }),
  ]);
  Object.assign(svc, {
    gateway: { process: gateway, ops: ports[0] },
    worker: { process: worker, ops: ports[1] },
    ledger: { process: ledger, ops: ports[2] },
    dispatcher: { process: dispatcher, ops: ports[3] },
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(svc).map((s) => s.process.stop()));
  await Promise.all([primary?.close(), secondary?.close(), receiver.close()]);
  await store?.close();
});

const gw = () => request(svc.gateway.process.url);
const scrapeAll = async () => ({
  gateway: await scrape(svc.gateway.ops),
  worker: await scrape(svc.worker.ops),
  ledger: await scrape(svc.ledger.ops),
  dispatcher: await scrape(svc.dispatcher.ops),
});

/** Waits until `figure` of a fresh scrape of `service` reaches at least `atLeast`. */
async function reaches(service: keyof typeof svc, figure: (s: Scrape) => number, atLeast: number, timeoutMs = 15_000): Promise<void> {
  await until(`${service} figure reaching ${atLeast}`, async () => figure(await scrape(svc[service].ops)) >= atLeast, timeoutMs);
}

describe("every service exports the common figures", () => {
  it("process metrics, build info, its Postgres pool; workers their queue's depth and age", async () => {
    const all = await scrapeAll();
    const services = { gateway: "gateway", worker: "check-worker", ledger: "billing-ledger", dispatcher: "webhook-dispatcher" } as const;
    for (const [key, name] of Object.entries(services)) {
      const s = all[key as keyof typeof all];
      expect(s.sum("svc_build_info", { service: name })).toBe(1);
      expect(s.has("process_cpu_seconds_total")).toBe(true);
      expect(s.has("nodejs_eventloop_lag_seconds")).toBe(true);
      for (const state of ["total", "idle", "waiting"]) expect(s.has("svc_db_pool_connections", { state })).toBe(true);
      expect(s.sum("svc_db_pool_connections", { state: "total" })).toBeGreaterThan(0);
    }
    for (const [key, queue] of [["worker", "checks"], ["ledger", "settlements"], ["dispatcher", "webhooks"]] as const) {
      for (const state of ["waiting", "active", "delayed", "failed"]) expect(all[key].has("svc_queue_messages", { queue, state })).toBe(true);
      expect(all[key].has("svc_queue_oldest_waiting_age_seconds", { queue })).toBe(true);
      // A worker reports only the queue it consumes.
      expect(all[key].samples.filter((x) => x.name === "svc_queue_messages" && x.labels.queue !== queue)).toEqual([]);
    }
    expect(all.gateway.has("svc_queue_messages")).toBe(false);
    expect(all.gateway.has("svc_bulk_intake_tasks", { state: "running" })).toBe(true);
    expect(all.ledger.sum("svc_ledger_imbalance_micros")).toBe(0);
    expect(all.ledger.has("svc_ledger_oldest_unsettled_seconds")).toBe(true);
  });
});

describe("figures move with the work", () => {
  it("a live lookup: the gateway's request and reservation, the check-worker's job and answer, the ledger's settlement", async () => {
    const before = await scrapeAll();
    const res = await gw().post("/v1/lookup").set(bearer(live.key)).send({ numbers: ["+14155552671"], checks: ["whatsapp"], wait: 10 });
    expect(res.status).toBe(200);

    const after = await scrape(svc.gateway.ops);
    const post = { method: "POST", route: "/v1/lookup" };
    expect(after.sum("svc_http_requests_total", { ...post, status: "200" }) - before.gateway.sum("svc_http_requests_total", { ...post, status: "200" })).toBe(1);
    expect(after.sum("svc_http_request_duration_seconds_count", { ...post, status_class: "2xx" }) - before.gateway.sum("svc_http_request_duration_seconds_count", { ...post, status_class: "2xx" })).toBe(1);
    expect(after.sum("svc_http_request_duration_seconds_sum", post)).toBeGreaterThan(before.gateway.sum("svc_http_request_duration_seconds_sum", post));
    expect(after.sum("svc_reservations_total", { mode: "live", outcome: "reserved" }) - before.gateway.sum("svc_reservations_total", { mode: "live", outcome: "reserved" })).toBe(1);
    expect(after.sum("svc_reserved_micros_total", { mode: "live" })).toBeGreaterThan(before.gateway.sum("svc_reserved_micros_total", { mode: "live" }));

    // The gateway answers as soon as the answers are stored; the worker's handler
    // returns (and its job is counted) moments later.
    const run = { queue: "checks", name: "lookup.run", outcome: "ok" };
    await reaches("worker", (s) => s.sum("svc_queue_jobs_processed_total", run), before.worker.sum("svc_queue_jobs_processed_total", run) + 1);
    const worker = await scrape(svc.worker.ops);
    expect(worker.sum("svc_queue_jobs_processed_total", run) - before.worker.sum("svc_queue_jobs_processed_total", run)).toBe(1);
    expect(worker.sum("svc_queue_job_duration_seconds_count", { queue: "checks", name: "lookup.run" })).toBeGreaterThan(before.worker.sum("svc_queue_job_duration_seconds_count", { queue: "checks", name: "lookup.run" }));
    const answered = { check: "whatsapp", source: "vendor-primary:whatsapp" };
    expect(worker.sum("svc_check_answers_total", answered) - before.worker.sum("svc_check_answers_total", answered)).toBe(1);
    const call = { source: "vendor-primary:whatsapp", outcome: "ok" };
    expect(worker.sum("svc_source_request_duration_seconds_count", call) - before.worker.sum("svc_source_request_duration_seconds_count", call)).toBe(1);
    expect(worker.sum("svc_source_breaker_open", { source: "vendor-primary:whatsapp" })).toBe(0);

    await reaches("ledger", (s) => s.sum("svc_settlements_total", { outcome: "closed" }), before.ledger.sum("svc_settlements_total", { outcome: "closed" }) + 1);
    const ledger = await scrape(svc.ledger.ops);
    expect(ledger.sum("svc_queue_jobs_processed_total", { queue: "settlements", name: "settle.reservation", outcome: "ok" })).toBeGreaterThan(
      before.ledger.sum("svc_queue_jobs_processed_total", { queue: "settlements", name: "settle.reservation", outcome: "ok" }),
    );
    expect(ledger.sum("svc_settled_micros_total")).toBeGreaterThan(before.ledger.sum("svc_settled_micros_total"));
  }, 30_000);

  it("a job: its chunk in the check-worker, its answers, and its settlement", async () => {
    const before = await scrapeAll();
    const created = await gw().post("/v1/jobs").set(bearer(live.key)).send({ numbers: ["+14155552672", "+14155552673", "+14155552674"], checks: ["whatsapp"] });
    expect(created.status).toBe(201);
    const chunk = { queue: "checks", name: "job.chunk", outcome: "ok" };
    await reaches("worker", (s) => s.sum("svc_queue_jobs_processed_total", chunk), before.worker.sum("svc_queue_jobs_processed_total", chunk) + 1);
    const worker = await scrape(svc.worker.ops);
    expect(worker.sum("svc_check_answers_total", { check: "whatsapp", source: "vendor-primary:whatsapp" }) - before.worker.sum("svc_check_answers_total", { check: "whatsapp", source: "vendor-primary:whatsapp" })).toBe(3);
    // One batch call for the chunk's three numbers.
    const call = { source: "vendor-primary:whatsapp", outcome: "ok" };
    expect(worker.sum("svc_source_request_duration_seconds_count", call) - before.worker.sum("svc_source_request_duration_seconds_count", call)).toBe(1);
    const gateway = await scrape(svc.gateway.ops);
    expect(gateway.sum("svc_http_requests_total", { method: "POST", route: "/v1/jobs", status: "201" }) - before.gateway.sum("svc_http_requests_total", { method: "POST", route: "/v1/jobs", status: "201" })).toBe(1);
    // A job settles in the transaction that finishes it, in the check-worker (b4fcc41), not in the ledger.
    await reaches("worker", (s) => s.sum("svc_settled_micros_total"), before.worker.sum("svc_settled_micros_total") + 1);
    await reaches("worker", (s) => s.sum("svc_settlements_total", { outcome: "closed" }), before.worker.sum("svc_settlements_total", { outcome: "closed" }) + 1);
  }, 30_000);

  it("webhook deliveries: attempts by outcome, their latency, and deliveries waiting for a retry", async () => {
    const before = await scrape(svc.dispatcher.ops);
    const made = await gw().post("/v1/webhook_endpoints").set(bearer(live.key)).send({ url: receiver.url("/metrics-hooks"), events: ["lookup.completed"] });
    expect(made.status).toBe(201);
    await receiver.waitFor((r) => r.path === "/metrics-hooks");
    await reaches("dispatcher", (s) => s.sum("svc_webhook_attempts_total", { outcome: "success" }), before.sum("svc_webhook_attempts_total", { outcome: "success" }) + 1);
    // The attempt is counted when the answer arrives; the dispatch message it ran in
    // is counted once the outcome is written to Postgres.
    const dispatched = { queue: "webhooks", name: "event.dispatch", outcome: "ok" };
    await reaches("dispatcher", (s) => s.sum("svc_queue_jobs_processed_total", dispatched), before.sum("svc_queue_jobs_processed_total", dispatched) + 1);
    let after = await scrape(svc.dispatcher.ops);
    expect(after.sum("svc_webhook_delivery_duration_seconds_count")).toBeGreaterThan(before.sum("svc_webhook_delivery_duration_seconds_count"));
    expect(after.sum("svc_queue_job_duration_seconds_count", { queue: "webhooks", name: "event.dispatch" })).toBeGreaterThan(
      before.sum("svc_queue_job_duration_seconds_count", { queue: "webhooks", name: "event.dispatch" }),
    );

    await until("endpoint active", async () => (await gw().get("/v1/webhook_endpoints").set(bearer(live.key))).body.data[0]?.status === "active");
    receiver.reply = (_r, res) => void res.writeHead(503).end();
    const fired = await gw().post(`/v1/webhook_endpoints/${made.body.id}/test`).set(bearer(live.key));
    expect(fired.status).toBe(202);
    await reaches("dispatcher", (s) => s.sum("svc_webhook_attempts_total", { outcome: "http_error" }), before.sum("svc_webhook_attempts_total", { outcome: "http_error" }) + 1);
    // Read from Postgres at scrape time (cached 10 s): the failed attempt's delivery waits for its retry.
    await reaches("dispatcher", (s) => s.sum("svc_webhook_deliveries", { state: "pending" }), 1, 20_000);
    after = await scrape(svc.dispatcher.ops);
    expect(after.has("svc_webhook_deliveries", { state: "held" })).toBe(true);
    expect(after.has("svc_webhook_deliveries", { state: "failed" })).toBe(true);
    receiver.reply = (_r, res) => void res.writeHead(200).end("ok");
  }, 45_000);

  it("a failing data source: retries, failovers to the next route, answers from it, and an open breaker", async () => {
    const before = await scrape(svc.worker.ops);
    primary.settings.outage = true;
    try {
      // Five lookups, five failed calls to the primary route (each retried once): its breaker opens.
      const numbers = ["+14155552681", "+14155552682", "+14155552683", "+14155552684", "+14155552685"];
      const answers = await Promise.all(numbers.map((n) => gw().post("/v1/lookup").set(bearer(live.key)).send({ numbers: [n], checks: ["whatsapp"], wait: 10 })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
      const after = await scrape(svc.worker.ops);
      expect(after.sum("svc_source_retries_total", { source: "vendor-primary:whatsapp" }) - before.sum("svc_source_retries_total", { source: "vendor-primary:whatsapp" })).toBe(5);
      expect(after.sum("svc_source_request_duration_seconds_count", { source: "vendor-primary:whatsapp", outcome: "unavailable" }) - before.sum("svc_source_request_duration_seconds_count", { source: "vendor-primary:whatsapp", outcome: "unavailable" })).toBe(10);
      expect(after.sum("svc_source_failovers_total", { check: "whatsapp" }) - before.sum("svc_source_failovers_total", { check: "whatsapp" })).toBe(5);
      expect(after.sum("svc_check_answers_total", { check: "whatsapp", source: "vendor-secondary:whatsapp" }) - before.sum("svc_check_answers_total", { check: "whatsapp", source: "vendor-secondary:whatsapp" })).toBe(5);
      expect(after.sum("svc_source_breaker_open", { source: "vendor-primary:whatsapp" })).toBe(1);
      expect(after.sum("svc_source_breaker_open", { source: "vendor-secondary:whatsapp" })).toBe(0);
    } finally {
      primary.settings.outage = false;
    }
  }, 30_000);

  it("the ledger's reconciliation shows an account whose cached balance no longer matches its ledger", async () => {
    const other = await accountWithKey(store, env.keyHashSecret, { mode: "live" });
    await reaches("ledger", (s) => s.sum("svc_ledger_reconciled_timestamp_seconds"), Date.now() / 1000);
    expect((await scrape(svc.ledger.ops)).sum("svc_ledger_imbalance_micros")).toBe(0);
    await store.pool.query(`UPDATE accounts SET balance_micros = balance_micros + 1234 WHERE id = $1`, [other.accountId]);
    try {
      await reaches("ledger", (s) => s.sum("svc_ledger_imbalance_micros"), 1234, 10_000);
      const s = await scrape(svc.ledger.ops);
      expect([s.sum("svc_ledger_imbalance_micros"), s.sum("svc_ledger_unbalanced_accounts")]).toEqual([1234, 1]);
    } finally {
      await store.pool.query(`UPDATE accounts SET balance_micros = balance_micros - 1234 WHERE id = $1`, [other.accountId]);
    }
    await until("balanced again", async () => (await scrape(svc.ledger.ops)).sum("svc_ledger_imbalance_micros") === 0);
  }, 30_000);
});

describe("labels stay bounded", () => {
  /** Labels whose values are numbers by nature. */
  const NUMERIC = new Set(["le", "quantile", "status", "major", "minor", "patch"]);
  const FORBIDDEN: Array<[string, RegExp]> = [
    ["an id of ours", /\b(lkp|job|rsv|evt|key|acct|req|we|whe|ep)_[0-9A-Za-z]{6,}/],
    ["an address", /@|%40/],
    ["a phone number", /\+?\d[\d\s().-]{6,}\d|%2B/i],
    ["an IP address", /\b\d{1,3}(\.\d{1,3}){3}\b|::1/],
    ["a URL", /:\/\//],
    ["a key or secret", /svc_(test|live|agent)_|whsec_/],
  ];

  function offending(samples: Sample[]): string[] {
    const bad: string[] = [];
    for (const s of samples) {
      for (const [label, value] of Object.entries(s.labels)) {
        if (NUMERIC.has(label)) {
          if (label === "status" && !/^[1-5]\d\d$/.test(value)) bad.push(`${s.name}{${label}="${value}"}: not a status code`);
          continue;
        }
        if (/^\d+(\.\d+)?$/.test(value)) bad.push(`${s.name}{${label}="${value}"}: a number`);
        for (const [what, re] of FORBIDDEN) if (re.test(value)) bad.push(`${s.name}{${label}="${value}"}: ${what}`);
        if (label === "route" && value !== "(no route)" && !/^(\/[A-Za-z0-9_.:-]*)+$/.test(value)) bad.push(`${s.name}{route="${value}"}: not a template`);
      }
    }
    return bad;
  }

  it("no label value is an identifier, a number, an address or a raw path, whatever clients send", async () => {
    // Identifiers where the path should hold ids, and paths no route knows.
    await gw().get("/v1/lookups/%2B12125550177").set(bearer(live.key));
    await gw().get("/v1/lookups/lkp_AbCdEf123456").set(bearer(live.key));
    await gw().get("/v1/no-such/private.person%40corp.example");
    await gw().get("/v1/jobs/job_ZyXwVu987654/results?cursor=12125550177").set(bearer(live.key));
    await gw().patch("/v1/lookups/lkp_AbCdEf123456").set(bearer(live.key)).send({});
    await request(svc.gateway.process.url).options("/v1/lookup");
    await gw().get(`/${"a".repeat(300)}`);
    const all = await scrapeAll();
    for (const s of Object.values(all)) expect(offending(s.samples)).toEqual([]);
    const routes = new Set(all.gateway.samples.filter((x) => x.name === "svc_http_requests_total").map((x) => x.labels.route));
    expect(routes).toEqual(new Set(["/v1/lookup", "/v1/jobs", "/v1/lookups/:id", "/v1/jobs/:id/results", "/v1/webhook_endpoints", "/v1/webhook_endpoints/:id/test", "(no route)"]));
    const methods = new Set(all.gateway.samples.filter((x) => x.name === "svc_http_requests_total").map((x) => x.labels.method));
    expect([...methods].every((m) => ["GET", "POST", "PATCH", "OPTIONS", "HEAD", "PUT", "DELETE", "OTHER"].includes(m as string))).toBe(true);
    // The raw text sent never reaches the exposition at all.
    for (const port of Object.values(svc).map((s) => s.ops)) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      for (const raw of ["12125550177", "private.person", "corp.example", "lkp_AbCdEf123456", "job_ZyXwVu987654", live.accountId, live.keyId, "aaaaaaaaaa"]) expect(text).not.toContain(raw);
    }
  });
});

describe("a gateway of several processes (WEB_CONCURRENCY=2)", () => {
  it("answers on one operations port with every process's figures added up, and drains on SIGTERM", async () => {
    const ops = await freePort();
    const gateway = await startService("gateway", env, { PORT: "0", WEB_CONCURRENCY: "2", METRICS_PORT: String(ops), METRICS_HOST: "127.0.0.1" });
    try {
      await until("both processes up", async () => (gateway.output().match(/gateway listening/g) ?? []).length === 2);
      await until("ready", async () => (await probe(ops, "/readyz")).status === 200);
      // New connections each time, so node:cluster spreads them over both processes.
      for (let i = 0; i < 20; i += 1) expect((await request(gateway.url).get("/v1/health").set("Connection", "close")).status).toBe(200);
      const s = await scrape(ops);
      expect(s.sum("svc_http_requests_total", { method: "GET", route: "/v1/health", status: "200" })).toBe(20);
      expect(s.sum("svc_build_info", { service: "gateway" })).toBe(1);
      // Two pools of connections, summed.
      expect(s.sum("svc_db_pool_connections", { state: "total" })).toBeGreaterThanOrEqual(2);
      gateway.child.kill("SIGTERM");
      expect((await probe(ops, "/readyz")).status).toBe(503);
      expect(await gateway.exited).toBe(0);
    } finally {
      await gateway.stop();
    }
  }, 45_000);
});
