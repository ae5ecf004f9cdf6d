import { activateEndpoint, deleteEndpoint, deliveryLog, recordAttempt, recordEvent, recordTestEvent, redeliverEvent, updateEndpoint, withTransaction } from "@svc/store";
import { createTestEnv, type TestEnv } from "../support/env";
import {
  createTestCertificates,
  inProcessDispatcher,
  makeEndpoint,
  signatureMatches,
  verifyDelivery,
  WebhookReceiver,
  type InProcessDispatcher,
  type TestEndpoint,
} from "../support/webhooks";

const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
let env: TestEnv;
let d: InProcessDispatcher;

beforeAll(async () => {
  env = await createTestEnv();
  await receiver.start();
  d = await inProcessDispatcher(env, certs);
});
afterAll(async () => {
  await d.close();
  await receiver.close();
});
beforeEach(() => {
  d.clock.now = new Date();
  receiver.reply = (_r, res) => void res.writeHead(200).end("ok");
});

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const at = (ms: number) => new Date(d.clock.now.getTime() + ms);
const forPath = (path: string, type?: string) => receiver.requests.filter((r) => r.path === path && (!type || JSON.parse(r.body).type === type));
const url = (path: string) => receiver.url(path);

function record(endpoint: Pick<TestEndpoint, "accountId">, type: string, opts: { endpointId?: string | null; livemode?: boolean; createdAt?: Date; data?: Record<string, unknown> } = {}) {
  return recordEvent(d.store.pool, {
    accountId: endpoint.accountId,
    livemode: opts.livemode ?? true,
    type,
    endpointId: opts.endpointId ?? null,
    createdAt: opts.createdAt ?? d.clock.now,
    data: opts.data ?? { object: "lookup", id: "lkp_0123456789abcdef", status: "completed", livemode: true, summary: { total: 1, registered: 1, not_registered: 0, unknown: 0 } },
  });
}

async function deliveries(eventId: string) {
  return deliveryLog(d.store.pool, eventId);
}
async function endpointStatus(id: string): Promise<string> {
  const { rows } = await d.store.pool.query(`SELECT status FROM webhook_endpoints WHERE id = $1`, [id]);
  return rows[0]?.status;
}

describe("webhook dispatcher", () => {
  it("signs each delivery so the standardwebhooks library verifies it, with the spec's envelope", async () => {
    const ep = await makeEndpoint(d, { url: url("/signed"), active: true });
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(eventId);
    const [got] = forPath("/signed");
    expect(got).toBeDefined();
    const payload = verifyDelivery(ep.secret, got!);
    expect(payload).toEqual({
      type: "lookup.completed",
      id: eventId,
      created_at: d.clock.now.toISOString(),
      livemode: true,
      data: { object: "lookup", id: "lkp_0123456789abcdef", status: "completed", livemode: true, summary: { total: 1, registered: 1, not_registered: 0, unknown: 0 } },
    });
    expect(got!.headers).toMatchObject({ "webhook-id": eventId, "content-type": "application/json" });
    expect(Number(got!.headers["webhook-timestamp"])).toBe(Math.floor(d.clock.now.getTime() / 1000));
    expect(String(got!.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "succeeded", attempts: [{ attempt_no: 1, status_code: 200, succeeded: true, error: null }] });
  });

  it("retries after about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h (injected clock), then marks the delivery failed", async () => {
    const ep = await makeEndpoint(d, { url: url("/retry"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(503).end("down");
    const start = d.clock.now;
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(eventId);
    const attemptTimes = [start.getTime()];
    for (;;) {
      const [delivery] = await deliveries(eventId);
      if (delivery!.status !== "pending") break;
      // Not due a moment before its time, attempted at its time.
      d.clock.now = new Date(delivery!.next_attempt_at!.getTime() - 1);
      await d.dispatcher.attemptDelivery(delivery!.delivery_id);
      expect((await deliveries(eventId))[0]!.attempts).toHaveLength(attemptTimes.length);
      d.clock.now = delivery!.next_attempt_at!;
      attemptTimes.push(d.clock.now.getTime());
      await d.dispatcher.attemptDelivery(delivery!.delivery_id);
    }
    const gaps = attemptTimes.slice(1).map((t, i) => t - (attemptTimes[i] as number));
    expect(gaps).toEqual([5 * SECOND, 5 * 60 * SECOND, 30 * 60 * SECOND, 2 * HOUR, 5 * HOUR, 10 * HOUR]);
    const [final] = await deliveries(eventId);
    expect(final).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(final!.attempts.map((a) => [a.attempt_no, a.status_code, a.error, a.succeeded])).toEqual(
      Array.from({ length: 7 }, (_, i) => [i + 1, 503, "http_error", false]),
    );
    // Same webhook-id every time; a new timestamp and signature per attempt, each valid.
    const sent = forPath("/retry");
    expect(sent).toHaveLength(7);
    expect(new Set(sent.map((r) => r.headers["webhook-id"]))).toEqual(new Set([eventId]));
    expect(new Set(sent.map((r) => r.headers["webhook-timestamp"])).size).toBe(7);
    expect(new Set(sent.map((r) => r.headers["webhook-signature"])).size).toBe(7);
    expect(sent.every((r) => signatureMatches(ep.secret, r))).toBe(true);
    expect(new Set(sent.map((r) => r.body)).size).toBe(1);
  });

  it("spreads retries with jitter of at most 10 %", async () => {
    const jittery = await inProcessDispatcher(env, certs, { random: () => 0 });
    try {
      const ep = await makeEndpoint(jittery, { url: url("/jitter"), active: true });
      receiver.reply = (_r, res) => void res.writeHead(500).end();
      jittery.clock.now = d.clock.now;
      const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
      await jittery.dispatcher.dispatchEvent(eventId);
      const [delivery] = await deliveries(eventId);
      expect(delivery!.next_attempt_at!.getTime() - d.clock.now.getTime()).toBe(4_500);
    } finally {
      await jittery.close();
    }
  });

  it("does not schedule a retry more than 24 h after the event", async () => {
    const ep = await makeEndpoint(d, { url: url("/late"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id, createdAt: at(-24 * HOUR + 3 * SECOND) });
    await d.dispatcher.dispatchEvent(eventId);
    const [delivery] = await deliveries(eventId);
    expect(delivery).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(delivery!.attempts).toHaveLength(1);
  });

  it("treats redirects as failures (not followed) and timeouts as failures, and retries both", async () => {
    const ep = await makeEndpoint(d, { url: url("/redirect"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(302, { location: url("/elsewhere") }).end();
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(eventId);
    const [redirected] = await deliveries(eventId);
    expect(redirected).toMatchObject({ status: "pending", attempts: [{ status_code: 302, error: "redirect", succeeded: false }] });
    expect(redirected!.next_attempt_at!.getTime() - d.clock.now.getTime()).toBe(5_000);
    expect(forPath("/elsewhere")).toHaveLength(0);

    const quick = await inProcessDispatcher(env, certs, { transport: { timeoutMs: 300 } });
    try {
      const slow = await makeEndpoint(quick, { url: url("/slow"), active: true });
      receiver.reply = () => undefined; // never answers
      const slowEvent = await record(slow, "lookup.completed", { endpointId: slow.id });
      await quick.dispatcher.dispatchEvent(slowEvent);
      const [timedOut] = await deliveries(slowEvent);
      expect(timedOut).toMatchObject({ status: "pending", attempts: [{ status_code: null, error: "timeout", succeeded: false }] });
      expect(timedOut!.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(290);
    } finally {
      await quick.close();
    }
  });

  it("verifies an endpoint with a 2xx to its challenge, then delivers held events; those over 24 h old expire", async () => {
    const ep = await makeEndpoint(d, { url: url("/verify") });
    const old = await record(ep, "balance.low", { createdAt: at(-25 * HOUR), data: { object: "account" } });
    const fresh = await record(ep, "balance.low", { createdAt: at(-1 * HOUR), data: { object: "account" } });
    await d.dispatcher.dispatchEvent(old);
    await d.dispatcher.dispatchEvent(fresh);
    expect((await deliveries(fresh))[0]).toMatchObject({ status: "held", attempts: [] });
    expect(forPath("/verify")).toHaveLength(0);

    // The first challenge fails: the endpoint stays pending and nothing held goes out.
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    await d.dispatcher.dispatchEvent(ep.verificationEventId);
    expect(await endpointStatus(ep.id)).toBe("pending_verification");
    const [challenge] = await deliveries(ep.verificationEventId);
    const first = forPath("/verify")[0]!;
    expect(verifyDelivery<{ type: string; data: { challenge: string } }>(ep.secret, first).type).toBe("webhook.verification");

    receiver.reply = (_r, res) => void res.writeHead(204).end();
    d.clock.now = challenge!.next_attempt_at!;
    await d.dispatcher.attemptDelivery(challenge!.delivery_id);
    expect(await endpointStatus(ep.id)).toBe("active");
    expect((await deliveries(old))[0]).toMatchObject({ status: "expired" });
    const [released] = await deliveries(fresh);
    expect(released).toMatchObject({ status: "pending" });
    await d.dispatcher.attemptDelivery(released!.delivery_id);
    expect((await deliveries(fresh))[0]).toMatchObject({ status: "succeeded" });
    const sent = forPath("/verify");
    expect(sent.map((r) => JSON.parse(r.body).type)).toEqual(["webhook.verification", "webhook.verification", "balance.low"]);
    expect(sent[2]!.headers["webhook-id"]).toBe(fresh);
  });

  it("sends webhook.test before verification without verifying the endpoint", async () => {
    const ep = await makeEndpoint(d, { url: url("/test-event") });
    const eventId = await withTransaction(d.store.pool, (c) => recordTestEvent(c, { accountId: ep.accountId, livemode: true }, ep.id, d.clock.now));
    await d.dispatcher.dispatchEvent(eventId);
    const [got] = forPath("/test-event");
    expect(verifyDelivery<{ type: string; data: { id: string } }>(ep.secret, got!)).toMatchObject({ type: "webhook.test", data: { object: "webhook_endpoint", id: ep.id } });
    expect(await endpointStatus(ep.id)).toBe("pending_verification");
  });

  it("holds events after a URL change until the new URL is verified; an earlier challenge cannot verify it", async () => {
    const ep = await makeEndpoint(d, { url: url("/old"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(eventId);
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "pending" });

    // A challenge issued before the change (its delivery not yet planned).
    const stale = await withTransaction(d.store.pool, (c) => recordEvent(c, { accountId: ep.accountId, livemode: true, type: "webhook.verification", endpointId: ep.id, createdAt: d.clock.now, data: { object: "webhook_endpoint", id: ep.id, challenge: "old" } }));
    d.clock.now = at(SECOND);
    const changed = await withTransaction(d.store.pool, (c) => updateEndpoint(c, { accountId: ep.accountId, livemode: true }, ep.id, { url: url("/new"), now: d.clock.now }));
    expect(changed?.endpoint.status).toBe("pending_verification");
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "held" });

    receiver.reply = (_r, res) => void res.writeHead(200).end();
    await d.dispatcher.dispatchEvent(stale);
    expect(await deliveries(stale)).toEqual([]);
    expect(await endpointStatus(ep.id)).toBe("pending_verification");

    await d.dispatcher.dispatchEvent(changed!.eventId!);
    expect(await endpointStatus(ep.id)).toBe("active");
    const [released] = await deliveries(eventId);
    await d.dispatcher.attemptDelivery(released!.delivery_id);
    expect(forPath("/new").map((r) => [JSON.parse(r.body).type, r.headers["webhook-id"]])).toEqual([
      ["webhook.verification", changed!.eventId],
      ["lookup.completed", eventId],
    ]);
  });

  it("plans an event after a verification in progress, not from before it: the event goes out instead of being held and expiring", async () => {
    const ep = await makeEndpoint(d, { url: url("/racing") });
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    // Verification commits while the event is being planned.
    const verifying = await d.store.pool.connect();
    try {
      await verifying.query("BEGIN");
      await verifying.query(`UPDATE webhook_endpoints SET status = 'active', verified_at = now() WHERE id = $1`, [ep.id]);
      const planning = d.dispatcher.dispatchEvent(eventId);
      await new Promise((r) => setTimeout(r, 200));
      await verifying.query("COMMIT");
      await planning;
    } finally {
      verifying.release();
    }
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "succeeded" });
    expect(forPath("/racing", "lookup.completed")).toHaveLength(1);
  });

  it("keeps the record of an attempt under way when the URL changes, and the held delivery still goes out once verified", async () => {
    const ep = await makeEndpoint(d, { url: url("/moving-old"), active: true });
    let release: () => void = () => undefined;
    const answered = new Promise<void>((r) => (release = r));
    receiver.reply = (_r, res) => void answered.then(() => res.writeHead(500).end());
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    const first = d.dispatcher.dispatchEvent(eventId);
    await new Promise((r) => setTimeout(r, 200)); // the attempt is under way
    const changed = await withTransaction(d.store.pool, (c) => updateEndpoint(c, { accountId: ep.accountId, livemode: true }, ep.id, { url: url("/moving-new"), now: d.clock.now }));
    release();
    await first;
    const [held] = await deliveries(eventId);
    expect(held).toMatchObject({ status: "held", attempts: [{ attempt_no: 1, status_code: 500 }] });
    receiver.reply = (_r, res) => void res.writeHead(200).end();
    await d.dispatcher.dispatchEvent(changed!.eventId!); // verified: the delivery is released
    await d.dispatcher.attemptDelivery(held!.delivery_id);
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "succeeded", attempts: [{ attempt_no: 1, succeeded: false }, { attempt_no: 2, succeeded: true }] });
  });

  it("sends a queued webhook.test to the new URL after a URL change, and an operator's redelivery leaves held events held", async () => {
    const ep = await makeEndpoint(d, { url: url("/queued-old"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    const testEvent = await withTransaction(d.store.pool, (c) => recordTestEvent(c, { accountId: ep.accountId, livemode: true }, ep.id, d.clock.now));
    const lookupEvent = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(testEvent);
    await d.dispatcher.dispatchEvent(lookupEvent); // both failed once, retries scheduled
    await withTransaction(d.store.pool, (c) => updateEndpoint(c, { accountId: ep.accountId, livemode: true }, ep.id, { url: url("/queued-new"), now: d.clock.now }));
    receiver.reply = (_r, res) => void res.writeHead(200).end();
    const [test] = await deliveries(testEvent);
    expect(test).toMatchObject({ status: "pending" });
    d.clock.now = at(10 * SECOND); // its retry is due
    await d.dispatcher.attemptDelivery(test!.delivery_id);
    expect(forPath("/queued-new", "webhook.test")).toHaveLength(1);
    expect(await redeliverEvent(d.store.pool, lookupEvent, d.clock.now)).toEqual([]);
    expect((await deliveries(lookupEvent))[0]).toMatchObject({ status: "held" });
  });

  it("never lets a challenge recorded before a URL change verify the new URL, whatever the clocks that stamped them", async () => {
    const ep = await makeEndpoint(d, { url: url("/clock-b") });
    // An hourly challenge stamped by a dispatcher whose clock runs 5 s ahead of the gateway's…
    const ahead = at(5 * SECOND);
    await withTransaction(d.store.pool, (c) => recordEvent(c, { accountId: ep.accountId, livemode: true, type: "webhook.verification", endpointId: ep.id, createdAt: ahead, data: { object: "webhook_endpoint", id: ep.id, challenge: "b" } }));
    // …then the URL changes twice within a millisecond on the gateway's clock.
    const owner = { accountId: ep.accountId, livemode: true };
    const toC = await withTransaction(d.store.pool, (c) => updateEndpoint(c, owner, ep.id, { url: url("/clock-c"), now: d.clock.now }));
    const cChallenge = (await d.store.pool.query(`SELECT created_at FROM events WHERE id = $1`, [toC!.eventId])).rows[0].created_at as Date;
    await withTransaction(d.store.pool, (c) => updateEndpoint(c, owner, ep.id, { url: url("/clock-d"), now: d.clock.now }));
    // The challenges answered at B and at C arrive late: neither verifies D.
    expect(await activateEndpoint(d.store.pool, ep.id, ahead, d.clock.now)).toBeNull();
    expect(await activateEndpoint(d.store.pool, ep.id, cChallenge, d.clock.now)).toBeNull();
    expect(await endpointStatus(ep.id)).toBe("pending_verification");
  });

  it("lets a success stand over a failure recorded by an attempt that overran its lease", async () => {
    const ep = await makeEndpoint(d, { url: url("/overrun"), active: true });
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    receiver.reply = (_r, res) => void res.writeHead(200).end();
    await d.dispatcher.dispatchEvent(eventId);
    const [delivery] = await deliveries(eventId);
    // Two attempts ran at once; the slow one, failing for good, records first…
    await d.store.pool.query(`UPDATE webhook_deliveries SET status = 'pending' WHERE id = $1`, [delivery!.delivery_id]);
    const base = { deliveryId: delivery!.delivery_id, startedAt: d.clock.now, durationMs: 10_000, now: d.clock.now };
    expect(await recordAttempt(d.store.pool, { ...base, attemptNo: 2, statusCode: null, error: "timeout", succeeded: false, retryAt: null })).toBe("failed");
    // …and the one that arrived records after it.
    expect(await recordAttempt(d.store.pool, { ...base, attemptNo: 3, statusCode: 200, error: null, succeeded: true, retryAt: null })).toBe("succeeded");
  });

  it("routes events: named endpoint if subscribed, account-wide events to every subscribed endpoint of the mode", async () => {
    const a = await makeEndpoint(d, { url: url("/route-a"), events: ["balance.low"], active: true });
    const b = await makeEndpoint(d, { url: url("/route-b"), events: ["job.completed"], active: true, accountId: a.accountId });
    const testMode = await makeEndpoint(d, { url: url("/route-test"), events: ["balance.low"], active: true, accountId: a.accountId, livemode: false });
    const pending = await makeEndpoint(d, { url: url("/route-pending"), events: ["balance.low"], accountId: a.accountId });
    const gone = await makeEndpoint(d, { url: url("/route-gone"), events: ["balance.low"], active: true, accountId: a.accountId });
    await withTransaction(d.store.pool, (c) => deleteEndpoint(c, { accountId: a.accountId, livemode: true }, gone.id, d.clock.now));
    const other = await makeEndpoint(d, { url: url("/route-other"), events: ["balance.low"], active: true });

    const low = await record(a, "balance.low", { data: { object: "account" } });
    await d.dispatcher.dispatchEvent(low);
    const planned = await deliveries(low);
    expect(planned.map((x) => [x.endpoint_id, x.status]).sort()).toEqual([[a.id, "succeeded"], [pending.id, "held"]].sort());

    const unsubscribed = await record(a, "lookup.completed", { endpointId: a.id });
    const otherMode = await record(a, "lookup.completed", { endpointId: testMode.id, livemode: true });
    const named = await record(b, "job.completed", { endpointId: b.id, data: { object: "job" } });
    for (const e of [unsubscribed, otherMode, named]) await d.dispatcher.dispatchEvent(e);
    expect(await deliveries(unsubscribed)).toEqual([]);
    expect(await deliveries(otherMode)).toEqual([]);
    expect((await deliveries(named)).map((x) => x.endpoint_id)).toEqual([b.id]);
    expect(forPath("/route-test")).toHaveLength(0);
    expect(forPath("/route-gone")).toHaveLength(0);
    expect(forPath("/route-other")).toHaveLength(0);
    void other;
  });

  it("delivers nothing to a deleted endpoint, not even a retry already scheduled", async () => {
    const ep = await makeEndpoint(d, { url: url("/deleted"), active: true });
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.dispatchEvent(eventId);
    await withTransaction(d.store.pool, (c) => deleteEndpoint(c, { accountId: ep.accountId, livemode: true }, ep.id, d.clock.now));
    const [delivery] = await deliveries(eventId);
    expect(delivery!.status).toBe("cancelled");
    d.clock.now = at(HOUR);
    await d.dispatcher.attemptDelivery(delivery!.delivery_id);
    await d.dispatcher.sweep(0);
    expect(forPath("/deleted")).toHaveLength(1);
  });

  it("sends one attempt however many messages, sweeps and replicas race for it", async () => {
    const ep = await makeEndpoint(d, { url: url("/race"), active: true });
    receiver.reply = (_r, res) => void setTimeout(() => res.writeHead(200).end(), 200);
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    const other = await inProcessDispatcher(env, certs);
    try {
      other.clock.now = d.clock.now;
      await Promise.all([d.dispatcher.dispatchEvent(eventId), d.dispatcher.dispatchEvent(eventId), other.dispatcher.dispatchEvent(eventId), d.dispatcher.sweep(0), other.dispatcher.sweep(0)]);
    } finally {
      await other.close();
    }
    expect(forPath("/race", "lookup.completed")).toHaveLength(1);
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "succeeded" });
  });

  it("the sweep plans events whose notice was lost and takes overdue retries", async () => {
    const ep = await makeEndpoint(d, { url: url("/swept"), active: true });
    const eventId = await record(ep, "lookup.completed", { endpointId: ep.id });
    await d.dispatcher.sweep(10_000);
    expect(forPath("/swept", "lookup.completed")).toHaveLength(0); // not yet overdue
    d.clock.now = at(10 * SECOND);
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    await d.dispatcher.sweep(10_000);
    expect(forPath("/swept", "lookup.completed")).toHaveLength(1);
    const [delivery] = await deliveries(eventId);
    receiver.reply = (_r, res) => void res.writeHead(200).end();
    d.clock.now = new Date(delivery!.next_attempt_at!.getTime() + 10 * SECOND);
    await d.dispatcher.sweep(10_000);
    expect(forPath("/swept", "lookup.completed")).toHaveLength(2);
    expect((await deliveries(eventId))[0]).toMatchObject({ status: "succeeded" });
  });

  it("challenges an unverified endpoint again every hour with a new event", async () => {
    const ep = await makeEndpoint(d, { url: url("/hourly") });
    receiver.reply = (_r, res) => void res.writeHead(500).end();
    await d.dispatcher.dispatchEvent(ep.verificationEventId);
    d.clock.now = at(HOUR - SECOND);
    await d.dispatcher.sweep(10_000);
    const challengesBefore = new Set(forPath("/hourly").map((r) => r.headers["webhook-id"]));
    expect(challengesBefore).toEqual(new Set([ep.verificationEventId]));
    d.clock.now = at(2 * SECOND);
    await d.dispatcher.sweep(10_000);
    const ids = [...new Set(forPath("/hourly").map((r) => r.headers["webhook-id"]))];
    expect(ids).toHaveLength(2);
    const second = forPath("/hourly").find((r) => r.headers["webhook-id"] === ids[1])!;
    const body = JSON.parse(second.body);
    expect(body.type).toBe("webhook.verification");
    expect(body.data.challenge).not.toBe(JSON.parse(forPath("/hourly")[0]!.body).data.challenge);
    // The first challenge's own retries stop within its hour.
    const [firstDelivery] = await deliveries(ep.verificationEventId);
    expect(firstDelivery!.status).toBe("failed");
  });
});
