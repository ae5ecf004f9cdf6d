import { spawnSync } from "node:child_process";
import path from "node:path";
import { DEFAULT_SCOPES } from "@svc/domain";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, startLiveWorkers, type LiveWorkers } from "../support/live";
import { createTestCertificates, LOOPBACK, verifyDelivery, WebhookReceiver } from "../support/webhooks";
import type { ReceivedRequest } from "../../packages/webhooks/src/testing/receiver";

/**
 * The whole path through real processes: the gateway records events, the
 * check-worker and billing-ledger finish work, and a webhook-dispatcher process
 * delivers to a real HTTPS receiver on loopback, trusted only through the
 * documented development settings. Every delivery is verified with the
 * standardwebhooks package, as a customer's receiver would.
 */
const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let gw: TestGateway;
let workers: LiveWorkers;
let dispatcher: RunningService;
const MANAGE = [...DEFAULT_SCOPES, "webhooks:manage" as const];
const dispatcherEnv = {
  WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK,
  WEBHOOK_EXTRA_CA_FILE: certs.caFile,
  WEBHOOK_TIMEOUT_MS: "1500",
  SWEEP_INTERVAL_MS: "300",
  SWEEP_GRACE_MS: "500",
  JOB_LOCK_MS: "2000",
};

beforeAll(async () => {
  await receiver.start();
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: LOOPBACK } });
  [workers, dispatcher] = await Promise.all([startLiveWorkers(gw.env), startService("webhook-dispatcher", gw.env, dispatcherEnv)]);
}, 60_000);
afterAll(async () => {
  await Promise.all([workers?.stop(), dispatcher?.stop()]);
  await receiver.close();
  await gw?.close();
});
beforeEach(() => {
  receiver.reply = (_r, res) => void res.writeHead(200).end("ok");
});

type Envelope = { type: string; id: string; created_at: string; livemode: boolean; data: Record<string, unknown> };
const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body) as Envelope;
const at = (path: string, type: string) => (r: ReceivedRequest) => r.path === path && bodyOf(r).type === type;

/** An endpoint made through the API and verified by the running dispatcher. */
async function verifiedEndpoint(k: TestKey, path: string, events: string[]): Promise<{ id: string; secret: string }> {
  const made = await gw.http().post("/v1/webhook_endpoints").set(bearer(k.key)).send({ url: receiver.url(path), events });
  expect(made.status).toBe(201);
  const challenge = await receiver.waitFor(at(path, "webhook.verification"));
  expect(verifyDelivery<Envelope>(made.body.secret, challenge).data).toMatchObject({ object: "webhook_endpoint", id: made.body.id });
  await eventually(async () => {
    const list = await gw.http().get("/v1/webhook_endpoints").set(bearer(k.key));
    return list.body.data.find((e: { id: string; status: string }) => e.id === made.body.id && e.status === "active");
  }, 10_000, "endpoint active");
  return { id: made.body.id, secret: made.body.secret };
}

describe("webhooks through the fleet", () => {
  it("verifies a new endpoint within seconds and delivers webhook.test on request", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: MANAGE });
    const started = Date.now();
    const ep = await verifiedEndpoint(k, "/fleet-verify", ["lookup.completed"]);
    expect(Date.now() - started).toBeLessThan(10_000);
    const fired = await gw.http().post(`/v1/webhook_endpoints/${ep.id}/test`).set(bearer(k.key));
    expect(fired.status).toBe(202);
    const got = await receiver.waitFor(at("/fleet-verify", "webhook.test"));
    expect(verifyDelivery<Envelope>(ep.secret, got)).toMatchObject({ type: "webhook.test", id: fired.body.id, livemode: false, data: { id: ep.id } });
  });

  it("announces a pending test lookup with lookup.completed, with counts and never the number or address", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: MANAGE });
    const ep = await verifiedEndpoint(k, "/fleet-lookup", ["lookup.completed"]);
    const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: ["+12025550107"], emails: ["pending@example.com"], checks: ["spam", "whatsapp", "email"], wait: 0, webhook_endpoint_id: ep.id });
    expect(res.status).toBe(202);
    const got = await receiver.waitFor(at("/fleet-lookup", "lookup.completed"), 1, 15_000);
    const payload = verifyDelivery<Envelope>(ep.secret, got);
    expect(payload).toMatchObject({
      type: "lookup.completed",
      livemode: false,
      data: { object: "lookup", id: res.body.id, status: "completed", livemode: false, summary: { total: 2 } },
    });
    expect(got.body).not.toMatch(/202555|2025550107|pending@|example\.com/);
  });

  it("delivers a live job's job.completed with progress and results_url; balance.low to subscribed endpoints", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", scopes: MANAGE, balanceMicros: 1_000_000n });
    await gw.store.pool.query(`UPDATE accounts SET low_balance_threshold_micros = 999999 WHERE id = $1`, [k.accountId]);
    const jobs = await verifiedEndpoint(k, "/fleet-job", ["job.completed"]);
    const money = await verifiedEndpoint(k, "/fleet-balance", ["balance.low"]);
    const created = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: ["+14155552671", "+14155552672", "+14155552675"], checks: ["whatsapp"], webhook_endpoint_id: jobs.id });
    expect(created.status).toBe(201);
    const got = await receiver.waitFor(at("/fleet-job", "job.completed"), 1, 30_000);
    const payload = verifyDelivery<Envelope>(jobs.secret, got);
    expect(payload.data).toMatchObject({ object: "job", id: created.body.id, status: "completed", progress: { total: 3, checks_total: 3, done: 3 }, results_url: `${gw.url}/v1/jobs/${created.body.id}/results` });
    expect(got.body).not.toMatch(/415555/);
    const low = await receiver.waitFor(at("/fleet-balance", "balance.low"), 1, 30_000);
    expect(verifyDelivery<Envelope>(money.secret, low).data).toMatchObject({ object: "account", threshold: { amount: "0.999999", currency: "USD" } });
    // Each endpoint gets only what it subscribed to.
    expect(receiver.requests.filter(at("/fleet-job", "balance.low"))).toHaveLength(0);
    expect(receiver.requests.filter(at("/fleet-balance", "job.completed"))).toHaveLength(0);
  }, 45_000);

  it("lets an operator list every attempt of an event and redeliver it from the CLI", async () => {
    const admin = (...args: string[]) => {
      const res = spawnSync(process.execPath, [path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js"), ...args], {
        cwd: "/",
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
        encoding: "utf8",
      });
      return { status: res.status, stderr: res.stderr, json: () => JSON.parse(res.stdout) };
    };
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: MANAGE });
    const ep = await verifiedEndpoint(k, "/fleet-cli", ["lookup.completed"]);
    receiver.reply = (_r, res) => void res.writeHead(503).end();
    const fired = (await gw.http().post(`/v1/webhook_endpoints/${ep.id}/test`).set(bearer(k.key))).body;
    await receiver.waitFor(at("/fleet-cli", "webhook.test"));
    const failed = await eventually(async () => {
      const out = admin("webhook", "attempts", "--event", fired.id).json();
      return out.deliveries[0]?.attempts.length === 1 ? out : undefined;
    }, 5_000, "attempt recorded");
    expect(failed).toMatchObject({
      object: "event_deliveries",
      event: { id: fired.id, type: "webhook.test", account_id: k.accountId, livemode: false },
      deliveries: [{ endpoint_id: ep.id, status: "pending", attempts: [{ attempt_no: 1, status_code: 503, error: "http_error", succeeded: false }] }],
    });
    expect(typeof failed.deliveries[0].attempts[0].duration_ms).toBe("number");

    receiver.reply = (_r, res) => void res.writeHead(200).end();
    const redelivered = admin("webhook", "redeliver", "--event", fired.id);
    expect([redelivered.status, redelivered.json().deliveries]).toEqual([0, 1]);
    const again = await receiver.waitFor(at("/fleet-cli", "webhook.test"), 2, 10_000);
    expect(verifyDelivery<Envelope>(ep.secret, again).id).toBe(fired.id);
    const done = await eventually(async () => {
      const out = admin("webhook", "attempts", "--event", fired.id).json();
      return out.deliveries[0]?.status === "succeeded" ? out : undefined;
    }, 5_000, "redelivery recorded");
    expect(done.deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200]);
    // A delivered event can be sent again on request, still under the same webhook-id.
    admin("webhook", "redeliver", "--event", fired.id);
    expect((await receiver.waitFor(at("/fleet-cli", "webhook.test"), 3, 10_000)).headers["webhook-id"]).toBe(fired.id);

    const unknown = admin("webhook", "attempts", "--event", "evt_doesnotexist0000");
    expect([unknown.status, unknown.stderr]).toEqual([2, expect.stringMatching(/no event/)]);
    expect(admin("webhook", "redeliver").status).toBe(2);
  }, 40_000);

  it("a dispatcher killed mid-delivery: the next one delivers the same webhook-id again", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: MANAGE });
    const ep = await verifiedEndpoint(k, "/fleet-kill", ["lookup.completed"]);
    receiver.reply = () => undefined; // hold the request: the dispatcher is mid-delivery
    const fired = await gw.http().post(`/v1/webhook_endpoints/${ep.id}/test`).set(bearer(k.key));
    const first = await receiver.waitFor(at("/fleet-kill", "webhook.test"));
    dispatcher.child.kill("SIGKILL");
    await dispatcher.exited;
    receiver.reply = (_r, res) => void res.writeHead(200).end();
    dispatcher = await startService("webhook-dispatcher", gw.env, dispatcherEnv);
    const again = await receiver.waitFor(at("/fleet-kill", "webhook.test"), 2, 20_000);
    expect(again.headers["webhook-id"]).toBe(fired.body.id);
    expect(first.headers["webhook-id"]).toBe(fired.body.id);
    expect(Number(again.headers["webhook-timestamp"])).toBeGreaterThan(Number(first.headers["webhook-timestamp"]));
    expect(verifyDelivery<Envelope>(ep.secret, again).id).toBe(fired.body.id);
    // The killed attempt left no record (its outcome is unknown); the redelivery is attempt 1.
    const rows = await eventually(async () => {
      const { rows } = await gw.store.pool.query(
        `SELECT d.status, count(a.*)::int AS attempts FROM webhook_deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.event_id = $1 GROUP BY d.id`,
        [fired.body.id],
      );
      return rows[0]?.status === "pending" ? undefined : rows;
    }, 5_000, "delivery recorded");
    expect(rows).toEqual([{ status: "succeeded", attempts: 1 }]);
  }, 40_000);

  it("shuts down cleanly on SIGTERM", async () => {
    expect(await dispatcher.stop("SIGTERM")).toBe(0);
    expect(dispatcher.output()).toMatch(/shutdown step done.*close service resources/s);
    dispatcher = await startService("webhook-dispatcher", gw.env, dispatcherEnv);
  });
});
