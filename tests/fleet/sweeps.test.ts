import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import type { WorkerContext } from "@svc/service-runner";
import { QUEUES } from "@svc/queues";
import { createLogger } from "@svc/process";
import { deliveryLog, recordEvent } from "@svc/store";
import { reconcileJobChunks } from "../../services/check-worker/src/reconcile";
import { sweepDueTestLookups } from "../../services/check-worker/src/test-lookups";
import { accountWithKey, bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { deleteKeysUnder } from "../support/redis-keys";
import { createTestCertificates, inProcessDispatcher, makeEndpoint, WebhookReceiver, type InProcessDispatcher } from "../support/webhooks";
import { routesKey } from "@svc/sources";

/**
 * Each reconciler keeps its takeover bound when a fault leaves it much to do
 * (docs/architecture.md, "Leases and takeover bounds"): one pass handles everything
 * Postgres says is lost, instead of a page per interval, and work merely waiting
 * its turn cannot hide lost work behind it.
 */
let gw: TestGateway;
let ctx: WorkerContext;
beforeAll(async () => {
  gw = await startTestGateway({ config: { JOB_CHUNK_ROWS: "50" } });
  ctx = { logger: createLogger("sweeps-test", "silent"), store: gw.store, redis: gw.deps.redis, producer: gw.deps.producer, prefix: gw.env.redisPrefix, fleet: gw.deps.fleet, now: () => new Date() };
});
afterAll(async () => gw?.close());

describe("check-worker reconcilers", () => {
  it("finds a lost chunk behind a backlog of chunks that are only waiting their turn", async () => {
    await gw.deps.redis.set(routesKey(gw.env.redisPrefix, "whatsapp"), JSON.stringify(["primary"]), "PX", 60_000); // a worker advertises the check
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
    const jobs: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await gw.http().post("/v1/jobs").set(bearer(k.key)).send({ numbers: [`+1415555${1100 + i * 7}`], checks: ["whatsapp"] });
      expect(created.status).toBe(201);
      jobs.push(created.body.id as string);
    }
    const queue = gw.deps.producer.queue(QUEUES.checks);
    const [, , lost] = jobs as [string, string, string];
    // The first two chunks' messages wait in the queue (no worker is free); the third's was lost.
    await (await queue.getJob(`chunk-${lost}-0`))?.remove();
    await reconcileJobChunks(ctx, 0, 2); // pages of 2: the lost chunk is on the second page
    expect(await (await queue.getJob(`chunk-${lost}-0-a0`))?.getState()).toBe("waiting");
    for (const waiting of jobs.slice(0, 2)) expect(await queue.getJob(`chunk-${waiting}-0-a0`)).toBeUndefined(); // no duplicates of waiting work
  });

  it("completes every due test lookup whose message was lost in one sweep, not a page per interval", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test" });
    const created = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: ["+12025550107"], checks: ["spam"], wait: 0 });
    expect(created.status).toBe(202);
    // 250 pending test lookups like it, due now, whose queue messages all went with Redis
    // (random ids without a time: filed under the legacy partition's month, as idMonth says).
    const ids = Array.from({ length: 250 }, () => `lkp_${randomBytes(12).toString("hex")}`);
    await gw.store.pool.query(
      `WITH copies AS (SELECT unnest($2::text[]) AS id)
       INSERT INTO lookups (id, id_month, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done, webhook_endpoint_id, request_id, created_at, completes_at, expires_at)
       SELECT c.id, DATE '1970-01-01', l.account_id, l.api_key_id, l.livemode, l.status, l.checks, l.row_count, l.checks_total, 0, l.webhook_endpoint_id, l.request_id, l.created_at, l.completes_at, l.expires_at
       FROM lookups l, copies c WHERE l.id = $1`,
      [created.body.id, ids],
    );
    await gw.store.pool.query(
      `INSERT INTO result_rows (lookup_id, id_month, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
       SELECT c.id, DATE '1970-01-01', r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks, r.pending_checks
       FROM result_rows r, unnest($2::text[]) AS c(id) WHERE r.lookup_id = $1`,
      [created.body.id, ids],
    );
    await gw.store.pool.query(`UPDATE lookups SET completes_at = $2 WHERE id = ANY ($1)`, [[created.body.id, ...ids], new Date(Date.now() - 1_000)]);
    await deleteKeysUnder(gw.env.redisUrl, `${gw.env.redisPrefix}:bull`);
    await sweepDueTestLookups(ctx);
    const { rows } = await gw.store.pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM lookups WHERE id = ANY ($1) GROUP BY status`, [[created.body.id, ...ids]]);
    expect(rows).toEqual([{ status: "completed", n: 251 }]);
  });
});

describe("webhook-dispatcher sweep", () => {
  const certs = createTestCertificates();
  const receiver = new WebhookReceiver(certs);
  let d: InProcessDispatcher;
  beforeAll(async () => {
    await receiver.start();
    d = await inProcessDispatcher(gw.env, certs);
  });
  afterAll(async () => {
    await d?.close();
    await receiver.close();
  });

  it("attempts every event whose message was lost at once: slow endpoints cost one attempt's time, not one each", async () => {
    const ep = await makeEndpoint(d, { url: receiver.url("/slow"), active: true });
    const events: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      events.push(
        await recordEvent(d.store.pool, {
          accountId: ep.accountId,
          livemode: true,
          type: "lookup.completed",
          endpointId: ep.id,
          createdAt: new Date(Date.now() - 60_000),
          data: { object: "lookup", id: "lkp_0123456789abcdef", status: "completed", livemode: true, summary: { total: 1, registered: 1, not_registered: 0, unknown: 0 } },
        }),
      );
    }
    // Each answer takes a second (the endpoint is slow, not down).
    receiver.reply = (_r, res) => void setTimeout(() => res.writeHead(200).end("ok"), 1_000);
    d.clock.now = new Date();
    const started = performance.now();
    await d.dispatcher.sweep(10_000);
    expect(performance.now() - started).toBeLessThan(5_000); // one at a time would take 10 s
    for (const eventId of events) expect((await deliveryLog(d.store.pool, eventId))[0]).toMatchObject({ status: "succeeded" });
  });
});
