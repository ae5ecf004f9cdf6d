import { Redis } from "ioredis";

/** Deletes every Redis key under `prefix` (a test's "Redis emptied" and the run's teardown). */
export async function deleteKeysUnder(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    await redis.quit();
  }
}
