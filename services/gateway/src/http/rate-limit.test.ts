import { createRedis, waitForRedis, type RedisClient } from "@svc/queues";
import { createTestEnv, type TestEnv } from "../../../../tests/support/env";
import { redisModes } from "../../../../tests/support/redis-modes";
import { batchedLuaScript, GCRA, luaScript, sandboxWindowKeys, WINDOWS } from "./rate-limit";

/**
 * The limiter's scripts on one Redis and on a Redis Cluster: the batched GCRA calls
 * of one event-loop turn touch keys all over the cluster (one pipeline per server),
 * and the sandbox's two windows share a slot (one script reads both).
 */
let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});

describe.each(redisModes())("rate-limit scripts on %s", (mode, urlOf) => {
  let redis: RedisClient;
  const prefix = () => `${env.redisPrefix}:${mode === "one Redis" ? "single" : "cluster"}`;
  beforeAll(async () => {
    redis = createRedis(urlOf(), "producer", "rate-limit-test");
    await waitForRedis(redis);
  });
  afterAll(async () => redis?.quit());

  it("answers every call of a batch spread over many keys: a key's burst of 20 passes, its 21st call waits", async () => {
    // 10 a second, bursts of 20 (the API's limits), for 40 keys in one turn: 840 calls.
    const gcra = batchedLuaScript(GCRA, ["100", "20"]);
    const keys = Array.from({ length: 40 }, (_, i) => `${prefix()}:rl:key:key_${i}`);
    const calls = keys.flatMap((key) => Array.from({ length: 21 }, () => gcra(redis, key)));
    const waits = (await Promise.all(calls)) as number[];
    for (let k = 0; k < keys.length; k += 1) {
      const mine = waits.slice(k * 21, k * 21 + 21);
      expect({ key: k, allowed: mine.filter((w) => w === 0).length }).toEqual({ key: k, allowed: 20 });
      expect(mine[20]).toBeGreaterThan(0);
    }
  });

  it("counts the sandbox's minute and day windows of one network together", async () => {
    const windows = luaScript(WINDOWS);
    const keys = sandboxWindowKeys(prefix(), "198.51.100.7", "2026-11-23");
    let last: [number, number, number] = [0, 0, 0];
    for (let i = 0; i < 3; i += 1) last = (await windows(redis, keys, [])) as [number, number, number];
    expect(last[0]).toBe(3);
    expect(last[1]).toBe(3);
    expect(last[2]).toBeGreaterThan(0);
    expect(last[2]).toBeLessThanOrEqual(60_000);
  });
});
