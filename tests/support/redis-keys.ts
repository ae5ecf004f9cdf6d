import { createRedis, keyPatternsOf, primariesOf, waitForRedis, type RedisClient } from "@svc/queues";

/** Every key matching `pattern` (SCAN on every master of a cluster, or on the one server). */
export async function keysMatching(redis: RedisClient, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of primariesOf(redis)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0");
  }
  return found;
}

/**
 * Deletes every Redis key under `prefix` (a test's "Redis emptied" and the run's
 * teardown): `<prefix>:*` and the hash-tagged `{<prefix>:*`, on every master.
 */
export async function deleteKeysUnder(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedis(redisUrl, "worker", "test-cleanup");
  try {
    await waitForRedis(redis);
    for (const pattern of keyPatternsOf(prefix)) {
      const keys = await keysMatching(redis, pattern);
      // A command per key, many in flight: on a cluster, keys of different slots cannot share one.
      for (let i = 0; i < keys.length; i += 500) await Promise.all(keys.slice(i, i + 500).map((k) => redis.unlink(k)));
    }
  } finally {
    await redis.quit();
  }
}
