import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import { parseRedisUrl } from "@svc/config";
import calculateSlot = require("cluster-key-slot");

/**
 * A connection to one Redis or to a Redis Cluster. Both speak the same commands;
 * what differs is that on a cluster every Lua script, MULTI and multi-key command
 * must touch keys of one slot (./keys gives every key its hash tag) and pub/sub is
 * sharded (./notices).
 */
export type RedisClient = Redis | Cluster;

export type RedisRole = "producer" | "worker" | "subscriber";

/**
 * A producer's command that has had no reply in this long fails. A Redis (or a
 * cluster master) that stops answering without closing its connections (a frozen
 * host, a cut network) would otherwise hold the command, and the request waiting on
 * it, for good. Long enough to ride out a cluster failover whose cluster-node-timeout
 * is a few seconds (see below); with Redis's default of 15 s, a command sent to a
 * silent master fails (the request answers 503, retryable) before the failover.
 */
export const PRODUCER_COMMAND_TIMEOUT_MS = 10_000;

/**
 * How often a cluster client asks the cluster for its slot map. Without it the client
 * learns of a failover only from a command's error, and a master that went silent
 * gives none: its commands (a worker's blocking wait included) would sit on the
 * silent connection. With it, the promoted replica replaces the silent master within
 * this long of the cluster's own failover, and the commands waiting on it are sent there.
 */
export const CLUSTER_SLOTS_REFRESH_MS = 2_000;

/**
 * The one way services, tools and tests connect to Redis. `url` is REDIS_URL:
 * `redis://host:port` for one server, `redis+cluster://host:port,host:port,...` for
 * a cluster (ioredis `Cluster` underneath; see @svc/config parseRedisUrl).
 *
 * Producers fail fast (a request must not hang on a dead Redis); workers and
 * subscribers wait and reconnect forever (`maxRetriesPerRequest: null`), as BullMQ
 * requires for blocking connections. A cluster's subscriber keeps one connection
 * per master for sharded pub/sub (SSUBSCRIBE goes to the shard owning the channel).
 */
export function createRedis(url: string, role: RedisRole, name: string): RedisClient {
  const options: RedisOptions =
    role === "producer"
      ? { maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS, connectionName: name }
      : { maxRetriesPerRequest: null, enableReadyCheck: true, connectionName: name };
  const target = parseRedisUrl(url);
  let redis: RedisClient;
  if (target.mode === "single") {
    redis = new Redis(target.url, { ...options, enableOfflineQueue: role !== "producer", lazyConnect: false });
  } else {
    const clusterOptions: ClusterOptions = {
      redisOptions: {
        ...options,
        ...(target.username ? { username: target.username } : {}),
        ...(target.password ? { password: target.password } : {}),
        ...(target.tls ? { tls: {} } : {}),
      },
      // A producer's command fails rather than waits while the client has no map of the
      // cluster; once it has one, a command to a master that just died is retried on
      // the promoted replica (MOVED, or a refresh after the failed attempts below).
      enableOfflineQueue: role !== "producer",
      shardedSubscribers: role === "subscriber",
      // TLS: connect to each node by the name it is known by rather than an address
      // resolved first, so the certificate is checked against that name (ioredis's
      // advice for managed clusters). A private CA is trusted with NODE_EXTRA_CA_CERTS.
      ...(target.tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
      // A failover (node timeout plus election) takes a second or two: retry across it.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      maxRedirections: 32,
      slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
      lazyConnect: false,
    };
    redis = new Cluster(target.nodes, clusterOptions);
  }
  // Connection errors surface through command failures and reconnects; an unhandled
  // 'error' event must never crash the process.
  redis.on("error", () => undefined);
  return redis;
}

/**
 * Why a cluster's first seed node cannot be used, asked of it directly; undefined
 * when it answers (or REDIS_URL is one server). A cluster client that reached no
 * node reports only "Connection is closed." (its slot refresh silences each node's
 * error), which says nothing of a refused certificate or password: start-up asks
 * this when the cluster did not become ready, to say why.
 */
export async function seedNodeError(url: string, timeoutMs = 3_000): Promise<Error | undefined> {
  const target = parseRedisUrl(url);
  if (target.mode !== "cluster" || !target.nodes[0]) return undefined;
  const seed = new Redis({
    ...target.nodes[0],
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  try {
    return await new Promise<Error | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      seed.once("ready", () => (clearTimeout(timer), resolve(undefined)));
      seed.once("error", (err: Error) => (clearTimeout(timer), resolve(err)));
    });
  } finally {
    seed.disconnect();
  }
}

/** Whether `redis` is a cluster client. */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/** The masters of a cluster, or the one server: what a SCAN or FLUSH must visit to see every key. */
export function primariesOf(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes("master") : [redis];
}

/** The Redis Cluster hash slot of `key` (0-16383), honouring its {hash tag}. */
export function slotOf(key: string): number {
  return calculateSlot(key);
}

/**
 * Which server group (a master and its replicas) holds `key`: commands for keys of
 * one group can share a pipeline. A single Redis is one group (""); a cluster whose
 * slot map is not known yet answers null (send the command alone).
 */
export function serverGroupOf(redis: RedisClient, key: string): string | null {
  if (!isCluster(redis)) return "";
  const nodes = redis.slots[calculateSlot(key)];
  return nodes && nodes.length > 0 ? nodes.join(";") : null;
}

/** Resolves once the connection is ready, or rejects after `timeoutMs`. */
export async function waitForRedis(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
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
