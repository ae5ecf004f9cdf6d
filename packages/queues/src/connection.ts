import { Redis, type RedisOptions } from "ioredis";

/**
 * Producers fail fast (a request must not hang on a dead Redis); workers and
 * subscribers wait and reconnect forever (`maxRetriesPerRequest: null`), as BullMQ
 * requires for blocking connections.
 */
export function createRedis(url: string, role: "producer" | "worker" | "subscriber", name: string): Redis {
  const options: RedisOptions =
    role === "producer"
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5_000, connectionName: name }
      : { maxRetriesPerRequest: null, enableReadyCheck: true, connectionName: name };
  const redis = new Redis(url, { ...options, lazyConnect: false });
  // Connection errors surface through command failures and reconnects; an unhandled
  // 'error' event must never crash the process.
  redis.on("error", () => undefined);
  return redis;
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error("Redis did not become ready in time"));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
    };
    redis.on("ready", onReady);
  });
}
