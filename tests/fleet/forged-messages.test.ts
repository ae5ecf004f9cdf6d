import { Queue } from "bullmq";
import request from "supertest";
import { createRedis, lookupAnswerText, noticeChannels, queuePrefix, QUEUES, waitForRedis, type RedisClient } from "@svc/queues";
import { routesKey } from "@svc/sources";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, testFleet, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";

/**
 * An attacker who can write to (and read from) the fleet's Redis but does not hold
 * FLEET_MESSAGE_KEY, against the real fleet as processes. Before issue 20 a forged
 * completion notice answered a waiting POST /v1/lookup with whatever it carried,
 * and every live answer could be read off the notice channel as it happened.
 */

let env: TestEnv;
let store: Store;
let redis: RedisClient;
let gateway: RunningService;
let live: LiveWorkers;
let key: TestKey;
const checks = () => new Queue(QUEUES.checks, { connection: redis, prefix: queuePrefix(env.redisPrefix, QUEUES.checks) });
const settlements = () => new Queue(QUEUES.settlements, { connection: redis, prefix: queuePrefix(env.redisPrefix, QUEUES.settlements) });
const someNumbers = spacedNumbers(71);

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  redis = createRedis(env.redisUrl, "producer", "attacker");
  await waitForRedis(redis);
  key = await accountWithKey(store, env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
  [gateway, live] = await Promise.all([startService("gateway", env, { PORT: "0" }), startLiveWorkers(env)]);
  await eventually(async () => redis.get(routesKey(env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
}, 60_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), live?.stop()]);
  await redis?.quit();
  await store?.close();
});

/** Every notice channel name an attacker could use: the one before issue 20, and the fleet's real ones (discoverable with PUBSUB SHARDCHANNELS). */
const channels = () => [`${env.redisPrefix}:completed`, ...noticeChannels(testFleet(env).keys, env.redisPrefix)];

describe("a forged completion notice", () => {
  it("never answers a waiting lookup: the request answers with what the check-worker stored, billed as such", async () => {
    const queue = checks();
    await queue.pause();
    try {
      const [number] = someNumbers(1) as [string];
      const held = request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: [number], checks: ["whatsapp"], wait: 8 }).then((r) => r);
      // The lookup's id, read off the paused queue as an attacker would.
      const lookupId = await eventually(async () => ((await queue.getWaiting())[0]?.data as { lookupId?: string } | undefined)?.lookupId, 10_000, "lookup queued");
      const forged = lookupAnswerText(new Date(), [{ row_no: 1, checks: [{ check: "whatsapp", status: "ok", registered: true, billed: false, attributes: { forged: true } }] }]);
      for (const channel of channels()) {
        await redis.spublish(channel, `${lookupId} ${forged}`);
        await redis.spublish(channel, lookupId);
        await redis.spublish(channel, `${lookupId} ${Buffer.from(forged).toString("base64url")}`);
      }
      // Had a notice been taken, the request would have answered by now.
      await new Promise((r) => setTimeout(r, 500));
      await queue.resume();
      const res = await held;
      expect(res.status).toBe(200);
      expect(res.text).not.toContain("forged");
      const [answer] = res.body.results[0].checks;
      expect(answer.billed).toBe(true);
      const read = await request(gateway.url).get(`/v1/lookups/${lookupId}`).set(bearer(key.key));
      expect(read.body.results[0].checks).toEqual(res.body.results[0].checks);
    } finally {
      await queue.resume();
      await queue.close();
    }
  });

  it("cannot be read: a subscriber of every notice channel sees neither lookup ids nor answers", async () => {
    const spy = createRedis(env.redisUrl, "subscriber", "eavesdropper");
    const seen: string[] = [];
    try {
      await waitForRedis(spy);
      spy.on("smessage", (_channel: string, message: string) => seen.push(message));
      for (const channel of channels()) await spy.ssubscribe(channel);
      const res = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: someNumbers(2), checks: ["whatsapp", "carrier"], wait: 8 });
      expect(res.status).toBe(200);
      await eventually(async () => seen.length > 0, 5_000, "notice seen");
      const text = seen.join("\n");
      expect(text).not.toContain(res.body.id);
      for (const word of ["registered", "billed", "whatsapp", "carrier", "attributes", "completed_at"]) expect(text).not.toContain(word);
    } finally {
      await spy.quit();
    }
  });
});

describe("a forged queue message", () => {
  it("is refused by the consumer, unread: a settlement nobody in the fleet asked for is not run", async () => {
    const res = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: someNumbers(1), checks: ["whatsapp"], wait: 8 });
    expect(res.status).toBe(200);
    const { rows } = await store.pool.query<{ id: string }>(`SELECT id FROM reservations WHERE lookup_id = $1`, [res.body.id]);
    const reservationId = rows[0]?.id as string;
    const queue = settlements();
    try {
      await queue.add("settle.reservation", { reservationId }, { jobId: "forged-settle-1" });
      // Tagged with a key of the attacker's choosing, copied from no one.
      await queue.add("settle.reservation", { reservationId, auth: "A".repeat(43) }, { jobId: "forged-settle-2" });
      for (const jobId of ["forged-settle-1", "forged-settle-2"]) {
        const reason = await eventually(async () => (await queue.getJob(jobId))?.failedReason, 10_000, `${jobId} handled`);
        expect(reason).toMatch(/message refused/);
        expect((await queue.getJob(jobId))?.attemptsMade).toBe(1);
      }
    } finally {
      await queue.close();
    }
  });

  it("is refused by the check-worker too, while the fleet's own messages still run", async () => {
    const queue = checks();
    try {
      await queue.add("lookup.run", { lookupId: "lkp_Forged00000001" }, { jobId: "forged-run-1" });
      const reason = await eventually(async () => (await queue.getJob("forged-run-1"))?.failedReason, 10_000, "forged run handled");
      expect(reason).toMatch(/message refused/);
      const res = await request(gateway.url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: someNumbers(1), checks: ["whatsapp"], wait: 8 });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("completed");
    } finally {
      await queue.close();
    }
  });
});
