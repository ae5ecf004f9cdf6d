import { DEFAULT_SCOPES } from "@svc/domain";
import { Webhook } from "standardwebhooks";
import { Client, WebhookVerificationError, isEventType, isKnownEvent, verifyWebhook, type Job, type WebhookEvent } from "@svc/sdk";
import { accountWithKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";
import { createTestCertificates, LOOPBACK, WebhookReceiver } from "../support/webhooks";
import type { ReceivedRequest } from "../../packages/webhooks/src/testing/receiver";
import { routesKey } from "@svc/sources";

/**
 * The SDK on the paths that need the rest of the fleet: live lookups and jobs
 * finished by a real check-worker and billing-ledger, and webhook deliveries made
 * by a real webhook-dispatcher process to an HTTPS receiver, verified with
 * `verifyWebhook` as a customer's handler would.
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let gw: TestGateway;
let workers: LiveWorkers;
let dispatcher: RunningService;
const numbers = spacedNumbers(7);

beforeAll(async () => {
  await receiver.start();
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, JOB_CHUNK_ROWS: "50" } });
  [workers, dispatcher] = await Promise.all([
    startLiveWorkers(gw.env, { CONCURRENCY: "1" }),
    startService("webhook-dispatcher", gw.env, { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK, WEBHOOK_EXTRA_CA_FILE: certs.caFile, WEBHOOK_TIMEOUT_MS: "1500", SWEEP_INTERVAL_MS: "300", SWEEP_GRACE_MS: "500" }),
  ]);
  await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
}, 60_000);
afterAll(async () => {
  await Promise.all([workers?.stop(), dispatcher?.stop()]);
  await receiver.close();
  await gw?.close();
});
beforeEach(() => Object.assign(workers.sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false }));

/** Counts the client's HTTP requests by path (instrumentation around the platform fetch, not a double). */
function counted(): { fetch: typeof fetch; paths: string[] } {
  const paths: string[] = [];
  return { paths, fetch: (url, init) => (paths.push(String(url).replace(gw.url, "")), fetch(url, init)) };
}

const headersOf = (r: ReceivedRequest) => r.headers as Record<string, string>;
const typed = (type: string) => (r: ReceivedRequest) => JSON.parse(r.body).type === type;

describe("live paths", () => {
  it("waitForJob long-polls a running job to the end, reporting progress; results and download of the finished job", async () => {
    workers.sim.settings.latencyMs = 400;
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const io = counted();
    const client = new Client({ apiKey: k.key, baseUrl: gw.url, fetch: io.fetch });
    const list = numbers(300);
    const job = await client.jobs.create({ numbers: list, checks: ["whatsapp"] });
    expect(job.status).toBe("queued");
    const seen: Job[] = [];
    const started = Date.now();
    const done = await client.jobs.waitForJob(job.id, { pollWaitSeconds: 1, onProgress: (j) => seen.push(j) });
    const seconds = (Date.now() - started) / 1000;
    expect(done).toMatchObject({ status: "completed", progress: { total: 300, done: 300 } });
    expect(done.finished_at).not.toBeNull();
    const dones = seen.map((j) => j.progress.done);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    expect(new Set(dones).size).toBeGreaterThan(1); // progress seen moving, not only the end
    const polls = io.paths.filter((p) => p.startsWith(`/v1/jobs/${job.id}?wait=`));
    expect(polls.length).toBeLessThanOrEqual(Math.ceil(seconds) + 2); // one long poll a second at most
    expect(typeof done.cost.charged.amount).toBe("string");

    let rows = 0;
    for await (const row of client.jobs.results(job.id, { limit: 100 })) rows += row.checks.length;
    expect(rows).toBe(300);
    const chunks: Uint8Array[] = [];
    const d = await client.jobs.download(job.id, { format: "ndjson", to: new WritableStream({ write: (c) => void chunks.push(c) }) });
    expect(Buffer.concat(chunks).toString("utf8").trim().split("\n")).toHaveLength(300);
    expect(d.bytes).toBeGreaterThan(0);
  }, 60_000);

  it("waitForJob with the default 30 s long poll asks once or twice for a job of a few seconds", async () => {
    workers.sim.settings.latencyMs = 300;
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const io = counted();
    const client = new Client({ apiKey: k.key, baseUrl: gw.url, fetch: io.fetch });
    const job = await client.jobs.create({ numbers: numbers(150), checks: ["whatsapp"] });
    const done = await client.jobs.waitForJob(job.id);
    expect(done.status).toBe("completed");
    expect(io.paths.filter((p) => p.startsWith(`/v1/jobs/${job.id}?wait=30`)).length).toBeLessThanOrEqual(2);
  }, 60_000);

  it("cancel stops a running live job; waitForJob waits until its rows in flight are finished", async () => {
    workers.sim.settings.latencyMs = 800;
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const client = new Client({ apiKey: k.key, baseUrl: gw.url });
    const job = await client.jobs.create({ numbers: numbers(400), checks: ["whatsapp"] });
    const before = workers.sim.stats.requests;
    await eventually(async () => workers.sim.stats.requests > before, 10_000, "first chunk sent");
    const cancelled = await client.jobs.cancel(job.id);
    expect(cancelled.status).toBe("cancelled");
    const final = await client.jobs.waitForJob(job.id, { pollWaitSeconds: 2 });
    expect(final).toMatchObject({ status: "cancelled", progress: { done: 400 } });
    expect(final.finished_at).not.toBeNull();
  }, 60_000);

  it("a live lookup that outlasts its wait is pending, and waitForLookup brings it back completed", async () => {
    workers.sim.settings.latencyMs = 1_500;
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const client = new Client({ apiKey: k.key, baseUrl: gw.url });
    const pending = await client.lookups.create({ numbers: numbers(2), checks: ["whatsapp"], wait: 0 });
    expect(pending.status).toBe("pending");
    const done = await client.lookups.waitForLookup(pending.id, { maxWaitMs: 20_000 });
    expect(done.status).toBe("completed");
    await expect(client.lookups.create({ numbers: ["+12025550100"], checks: ["spam"] })).rejects.toMatchObject({ code: "test_number_only", status: 400 });
  }, 40_000);
});

describe("webhook deliveries verified with the SDK", () => {
  it("verifies the real verification and test deliveries of an endpoint made with the SDK", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: [...DEFAULT_SCOPES, "webhooks:manage"] });
    const client = new Client({ apiKey: k.key, baseUrl: gw.url });
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url("/sdk-hooks"), events: ["lookup.completed"] });
    const secret = endpoint.secret as string;
    const challenge = await receiver.waitFor((r) => r.path === "/sdk-hooks" && typed("webhook.verification")(r));
    const event = await verifyWebhook(challenge.body, headersOf(challenge), secret);
    expect(event).toMatchObject({ type: "webhook.verification", data: { object: "webhook_endpoint", id: endpoint.id } });
    expect(isEventType(event, "webhook.verification") && event.data.challenge).toBeTruthy();
    await eventually(async () => (await client.webhookEndpoints.list()).data.find((e) => e.id === endpoint.id && e.status === "active"), 10_000, "endpoint active");

    const queued = await client.webhookEndpoints.test(endpoint.id);
    const delivery = await receiver.waitFor((r) => r.path === "/sdk-hooks" && typed("webhook.test")(r));
    const test = await client.webhooks.verify(Buffer.from(delivery.body), new Headers(headersOf(delivery)), secret);
    expect(test).toMatchObject({ type: "webhook.test", id: queued.id });
    expect(headersOf(delivery)["webhook-id"]).toBe(queued.id);

    // The same delivery: tampered, another secret, replayed later than the tolerance.
    await expect(verifyWebhook(delivery.body.replace("webhook.test", "webhook.tesT"), headersOf(delivery), secret)).rejects.toMatchObject({ reason: "no_valid_signature" });
    const other = (await client.webhookEndpoints.create({ url: receiver.url("/other"), events: ["job.completed"] })).secret as string;
    await expect(verifyWebhook(delivery.body, headersOf(delivery), other)).rejects.toMatchObject({ reason: "no_valid_signature" });
    const later = Number(headersOf(delivery)["webhook-timestamp"]) * 1000 + 301_000;
    await expect(verifyWebhook(delivery.body, headersOf(delivery), secret, { now: later })).rejects.toMatchObject({ reason: "timestamp_too_old" });
    await expect(verifyWebhook(delivery.body, headersOf(delivery), secret, { now: later, toleranceSeconds: 600 })).resolves.toMatchObject({ type: "webhook.test" });

    // A pending lookup's lookup.completed, end to end.
    const pending = await client.lookups.create({ numbers: ["+12025550107"], checks: ["spam"], wait: 0, webhook_endpoint_id: endpoint.id });
    const completed = await receiver.waitFor((r) => r.path === "/sdk-hooks" && typed("lookup.completed")(r), 1, 20_000);
    const ev: WebhookEvent = await verifyWebhook(completed.body, headersOf(completed), secret);
    if (!isEventType(ev, "lookup.completed")) throw new Error(`unexpected ${ev.type}`);
    expect(ev.data).toMatchObject({ id: pending.id, status: "completed", summary: { total: 1 } });
  }, 60_000);
});

describe("verifyWebhook against an independent signer (the standardwebhooks package)", () => {
  const secret = `whsec_${Buffer.from("an independent 32-byte secret!!").toString("base64")}`;
  const lib = new Webhook(secret);
  const signed = (body: string, id = "evt_independent", at = new Date()) => ({ "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": lib.sign(id, at, body) });

  it("accepts the library's signatures, with several v1 entries of which one matches", async () => {
    const body = JSON.stringify({ type: "job.completed", id: "evt_independent", created_at: new Date().toISOString(), livemode: true, data: { object: "job", id: "job_1", status: "completed", progress: { total: 1, checks_total: 1, done: 1, conclusive: 1, non_billable: 0 }, results_url: "https://x/v1/jobs/job_1/results" } });
    const h = signed(body);
    const rotated = { ...h, "webhook-signature": `v1,${Buffer.alloc(32).toString("base64")} v1a,ignored ${h["webhook-signature"]}` };
    const event = await verifyWebhook(body, rotated, secret);
    expect(isEventType(event, "job.completed") && event.data.results_url).toBe("https://x/v1/jobs/job_1/results");
    expect(isKnownEvent(event)).toBe(true);
    // What the SDK signs, the library verifies.
    const mine = await client0().webhooks.sign(body, secret, { id: "evt_mine" });
    expect(lib.verify(body, mine)).toMatchObject({ type: "job.completed" });
  });

  it("passes an unknown event type through untouched", async () => {
    const body = JSON.stringify({ type: "number.reassigned", id: "evt_new", created_at: "2027-01-01T00:00:00Z", livemode: false, data: { object: "number_event", anything: [1, 2, { deep: true }] }, brand_new: "field" });
    const event = await verifyWebhook(body, signed(body, "evt_new"), secret);
    expect(event).toEqual(JSON.parse(body));
    expect(isKnownEvent(event)).toBe(false);
  });

  it("refuses what is not a valid delivery, saying why", async () => {
    const body = JSON.stringify({ type: "webhook.test", id: "evt_x", created_at: "2026-01-01T00:00:00Z", livemode: false, data: { object: "webhook_endpoint", id: "we_1", message: "hi" } });
    const h = signed(body, "evt_x");
    const reasons = async (...args: Parameters<typeof verifyWebhook>) => ((await verifyWebhook(...args).catch((e) => e)) as WebhookVerificationError).reason;
    expect(await reasons(body, { ...h, "webhook-signature": "" }, secret)).toBe("missing_header");
    expect(await reasons(body, { ...h, "webhook-timestamp": "yesterday" }, secret)).toBe("invalid_timestamp");
    expect(await reasons(body, signed(body, "evt_x", new Date(Date.now() + 600_000)), secret)).toBe("timestamp_too_new");
    expect(await reasons(body, { ...h, "webhook-id": "evt_other" }, secret)).toBe("no_valid_signature");
    expect(await reasons(body, h, "whsec_***")).toBe("invalid_secret");
    expect(await reasons(JSON.parse(body), h, secret)).toBe("invalid_body");
    const wrongShape = JSON.stringify({ type: "job.completed", id: "evt_y", created_at: "2026-01-01T00:00:00Z", data: { object: "job", id: "job_1" } });
    expect(await reasons(wrongShape, signed(wrongShape, "evt_y"), secret)).toBe("invalid_body");
    // Header names in any case, values as arrays (Node's IncomingHttpHeaders).
    const upper = { "Webhook-Id": h["webhook-id"], "WEBHOOK-TIMESTAMP": h["webhook-timestamp"], "webhook-signature": [h["webhook-signature"]] };
    await expect(verifyWebhook(body, upper, secret)).resolves.toMatchObject({ type: "webhook.test" });
  });
});

const client0 = () => new Client({ apiKey: "svc_test_unused000000000000000000000000000", baseUrl: "http://127.0.0.1:1" });
