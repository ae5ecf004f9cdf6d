import { createTestEnv, testFleet, type TestEnv } from "../../../tests/support/env";
import { deleteKeysUnder, keysMatching } from "../../../tests/support/redis-keys";
import { redisModes } from "../../../tests/support/redis-modes";
import { QUEUES } from "./catalog";
import { createRedis, isCluster, slotOf, waitForRedis, type RedisClient } from "./connection";
import { keyPatternsOf, queuePrefix } from "./keys";
import { Producer } from "./producer";

/**
 * The key layout: each queue's keys in one slot, the queues of a prefix in different
 * slots, and every key of a prefix found (and removed) by its two patterns, on every
 * master of a cluster.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

it("gives each queue its own hash tag, under the prefix", () => {
  expect(queuePrefix("svc", QUEUES.checks)).toBe("{svc:bull:checks}");
  const slots = new Set(Object.values(QUEUES).map((q) => slotOf(`${queuePrefix("svc", q)}:${q}:wait`)));
  expect(slots.size).toBe(Object.values(QUEUES).length);
  expect(slotOf("{svc:bull:checks}:checks:wait")).toBe(slotOf("{svc:bull:checks}:checks:1234"));
  expect(keyPatternsOf("svc")).toEqual(["svc:*", "{svc:*"]);
});

describe.each(redisModes())("on %s", (mode, urlOf) => {
  let redis: RedisClient;
  beforeAll(async () => {
    redis = createRedis(urlOf(), "producer", "keys-test");
    await waitForRedis(redis);
  });
  afterAll(async () => redis?.quit());

  it("finds and deletes every key of a prefix, tagged or not, and no other prefix's", async () => {
    const prefix = `${env.redisPrefix}:${mode === "one Redis" ? "single" : "cluster"}`;
    const producer = new Producer(redis, testFleet(env, prefix));
    for (const [n, lookupId] of ["lkp_KeysTest0001", "lkp_KeysTest0002"].entries()) {
      await producer.enqueue("lookup.complete-test", { lookupId }, { jobId: lookupId });
      await producer.enqueue("settle.reservation", { reservationId: `rsv_KeysTest000${n}` }, { jobId: `rsv_KeysTest000${n}` });
    }
    // Each queue writes its meta key once ready, unawaited by close(): let those writes land before the cleanup's SCAN.
    await Promise.all(Object.values(QUEUES).map((q) => producer.queue(q).getVersion()));
    await producer.close();
    // Plain keys spread over many slots, and a neighbour prefix that must survive.
    for (let i = 0; i < 50; i += 1) await redis.set(`${prefix}:plain:${i}`, "1");
    await redis.set(`${prefix}x:plain`, "neighbour");
    await redis.set(`{${prefix}x:tagged}:k`, "neighbour");

    const found = [...(await keysMatching(redis, `${prefix}:*`)), ...(await keysMatching(redis, `{${prefix}:*`))];
    expect(found.filter((k) => k.startsWith(`${prefix}:plain:`))).toHaveLength(50);
    expect(found.some((k) => k.startsWith(queuePrefix(prefix, QUEUES.checks)))).toBe(true);
    expect(found.some((k) => k.startsWith(queuePrefix(prefix, QUEUES.settlements)))).toBe(true);
    if (isCluster(redis)) {
      // Spread over more than one master: a SCAN of one node would have missed some.
      const owners = new Set(found.map((k) => redis.slots?.[slotOf(k)]?.[0] ?? ""));
      expect(owners.size).toBeGreaterThan(1);
    }

    await deleteKeysUnder(urlOf(), prefix);
    expect([...(await keysMatching(redis, `${prefix}:*`)), ...(await keysMatching(redis, `{${prefix}:*`))]).toEqual([]);
    expect(await redis.get(`${prefix}x:plain`)).toBe("neighbour");
    expect(await redis.get(`{${prefix}x:tagged}:k`)).toBe("neighbour");
  });
});
