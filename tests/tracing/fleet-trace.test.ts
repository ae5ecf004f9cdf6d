import { rmSync } from "node:fs";
import request from "supertest";
import { DEFAULT_SCOPES } from "@svc/domain";
import { createStore, type Store } from "@svc/store";
import { createRedis, waitForRedis } from "@svc/queues";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import type { Redis } from "ioredis";
import { createTestEnv, type TestEnv } from "../support/env";
import { accountWithKey, bearer } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { eventually } from "../support/live";
import { createTestCertificates, LOOPBACK, WebhookReceiver } from "../support/webhooks";
import { captureEnv, KIND, rawSpans, readSpans, type CapturedSpan } from "./support/spans";
import { routesKey } from "@svc/sources";

/**
 * One trace from the gateway's request to the webhook delivery, through real
 * processes: the four built services run with their own tracing module, started by a
 * preload with an in-memory exporter (support/capture.cjs) that writes each exported
 * span to a file. A live lookup with a webhook endpoint goes gateway → check-worker
 * (vendor call) → billing-ledger (settlement) and webhook-dispatcher (delivery).
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
const capture = captureEnv();
let env: TestEnv;
let store: Store;
let redis: Redis;
let sim: Simulator;
let services: RunningService[] = [];
let gateway: RunningService;

beforeAll(async () => {
  await receiver.start();
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
  redis = createRedis(env.redisUrl, "producer", "trace-test");
  await waitForRedis(redis);
  sim = await startSimulator();
  const traced = { ...capture.env, LOG_LEVEL: "info" };
  services = await Promise.all([
    startService("gateway", env, { ...traced, PORT: "0", WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK }),
    startService("check-worker", env, { ...traced, VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "sim-key", SWEEP_INTERVAL_MS: "500" }),
    startService("billing-ledger", env, { ...traced, SWEEP_INTERVAL_MS: "500" }),
    startService("webhook-dispatcher", env, { ...traced, WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, WEBHOOK_EXTRA_CA_FILE: certs.caFile, SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_MS: "500" }),
  ]);
  gateway = services[0] as RunningService;
  await eventually(async () => redis.get(routesKey(env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
}, 60_000);

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await sim?.close();
  await receiver.close();
  await redis?.quit();
  await store?.close();
  if (!process.env.KEEP_TRACE_CAPTURE) rmSync(capture.dir, { recursive: true, force: true });
});

const http = () => request(gateway.url);

/** The trace id the gateway logged with its access-log line for this request id. */
async function loggedTraceId(requestId: string): Promise<string> {
  const line = await eventually(
    async () => gateway.output().split("\n").find((l) => l.includes(`"reqId":"${requestId}"`) && l.includes('"msg":"request"')),
    5_000,
    "the request's access-log line",
  );
  const traceId = /"trace_id":"([0-9a-f]{32})"/.exec(line as string)?.[1];
  expect(traceId).toBeDefined();
  return traceId as string;
}

describe("a live lookup is one trace across the fleet", () => {
  it("follows the request's trace id through the check-worker, the ledger and the webhook delivery, and exports nothing personal", async () => {
    const k = await accountWithKey(store, env.keyHashSecret, { mode: "live", scopes: [...DEFAULT_SCOPES, "webhooks:manage"], balanceMicros: 10_000_000n });
    const made = await http().post("/v1/webhook_endpoints").set(bearer(k.key)).send({ url: receiver.url("/traced-hook/secret-path"), events: ["lookup.completed"] });
    expect(made.status).toBe(201);
    await eventually(async () => {
      const list = await http().get("/v1/webhook_endpoints").set(bearer(k.key));
      return list.body.data.find((e: { id: string; status: string }) => e.id === made.body.id && e.status === "active");
    }, 15_000, "endpoint verified");

    const number = "+14155550173";
    const res = await http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: [number], checks: ["whatsapp"], wait: 0, webhook_endpoint_id: made.body.id });
    expect(res.status).toBe(202);
    const lookupId = res.body.id as string;
    const traceId = await loggedTraceId(res.headers["x-request-id"] as string);

    await receiver.waitFor((r) => r.path === "/traced-hook/secret-path" && r.body.includes(lookupId) && r.body.includes("lookup.completed"), 1, 20_000);
    const inTrace = (): CapturedSpan[] => readSpans(capture.dir).filter((s) => s.traceId === traceId);
    const spans = await eventually(async () => {
      const all = inTrace();
      const has = (service: string, kind: number, name: RegExp) => all.some((s) => s.service === service && s.kind === kind && name.test(s.name));
      return has("gateway", KIND.server, /^POST \/v1\/lookup$/) &&
        has("check-worker", KIND.consumer, /^process checks$/) &&
        has("billing-ledger", KIND.consumer, /^process settlements$/) &&
        has("webhook-dispatcher", KIND.consumer, /^process webhooks$/) &&
        has("webhook-dispatcher", KIND.client, /^POST$/)
        ? all
        : undefined;
    }, 20_000, "spans of every service in the request's trace");

    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const one = (service: string, kind: number, name: RegExp) => spans.find((s) => s.service === service && s.kind === kind && name.test(s.name)) as CapturedSpan;
    // The gateway's server span, named by its route template, is the trace's root here.
    const server = one("gateway", KIND.server, /^POST \/v1\/lookup$/);
    expect(server.attributes["http.route"]).toBe("/v1/lookup");
    expect(server.parentSpanId).toBeUndefined();
    // Each consumer's parent is a producer span of the service before it.
    const parentOf = (s: CapturedSpan) => byId.get(s.parentSpanId ?? "");
    const checks = one("check-worker", KIND.consumer, /^process checks$/);
    expect(parentOf(checks)).toMatchObject({ service: "gateway", kind: KIND.producer, name: "send checks" });
    expect(checks.attributes).toMatchObject({ "messaging.system": "bullmq", "messaging.destination.name": "checks", "svc.job.name": "lookup.run" });
    const settle = one("billing-ledger", KIND.consumer, /^process settlements$/);
    expect(parentOf(settle)).toMatchObject({ service: "check-worker", kind: KIND.producer, name: "send settlements" });
    const dispatch = spans.filter((s) => s.service === "webhook-dispatcher" && s.kind === KIND.consumer);
    expect(dispatch.some((s) => parentOf(s)?.service === "check-worker" && parentOf(s)?.name === "send webhooks")).toBe(true);
    // Postgres, Redis and the outbound calls (vendor, webhook) are spans of the same trace.
    expect(spans.some((s) => s.service === "check-worker" && s.kind === KIND.client && (s.attributes["db.system.name"] ?? s.attributes["db.system"]) === "postgresql")).toBe(true);
    expect(spans.some((s) => s.service === "gateway" && (s.attributes["db.system.name"] ?? s.attributes["db.system"]) === "redis")).toBe(true);
    expect(spans.some((s) => s.service === "check-worker" && s.kind === KIND.client && s.name === "POST")).toBe(true);
    const delivery = one("webhook-dispatcher", KIND.client, /^POST$/);
    expect(delivery.attributes["http.status_code"] ?? delivery.attributes["http.response.status_code"]).toBe(200);

    // Log lines written inside the trace carry its id (the check-worker's completion line).
    await eventually(async () => services[1]?.output().includes(`"trace_id":"${traceId}"`), 5_000, "worker log line with the trace id");

    // Nothing personal, no address and no key in anything exported, by any service.
    const text = rawSpans(capture.dir);
    for (const secret of [number, number.slice(2), "4155550173", k.key, k.key.slice(-12), "secret-path", "traced-hook", "127.0.0.1", sim.url, made.body.secret])
      expect(text).not.toContain(secret);
    for (const s of readSpans(capture.dir)) {
      for (const name of Object.keys(s.attributes)) expect(name).not.toMatch(/^(url\.(full|path|query|original)|http\.(url|target|host|user_agent|client_ip)|net\.|network\.(peer|local)|server\.address|client\.|db\.(connection_string|user|postgresql\.values))/);
    }
  }, 60_000);
});
