import { readFileSync } from "node:fs";
import path from "node:path";
import Redis from "ioredis";
import { aclSetUserArgs, REDIS_SERVICES } from "../../packages/queues/src/acl";
import { runClusterDir } from "./redis-cluster";

/**
 * The run's Redis ACL users: one per service (`t-<run>-<service>`), with the rules
 * production gets (packages/queues/src/acl.ts) over the run's keys (`t:<run>:*`).
 * Services started by tests on the run's Redis connect as these (tests/support/env.ts
 * serviceRedisUrl); the tests' own connections stay the default user. On a cluster
 * each node gets them (ACL is not replicated).
 */
export async function createRunRedisUsers(runId: string, url: string, password: string): Promise<void> {
  for (const node of nodesOf(runId, url)) {
    const redis = new Redis({ host: "127.0.0.1", port: node, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      for (const service of REDIS_SERVICES) {
        await redis.call("ACL", ...aclSetUserArgs(service, `t:${runId}:*`, password, `t-${runId}-${service}`));
      }
    } finally {
      redis.disconnect();
    }
  }
}

/** Removes the run's users (the one Redis outlives the run; a cluster is stopped whole). */
export async function deleteRunRedisUsers(runId: string, url: string): Promise<void> {
  if (url.includes("+cluster")) return;
  const redis = new Redis({ host: "127.0.0.1", port: Number(new URL(url).port || 6379), lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.call("ACL", "DELUSER", ...REDIS_SERVICES.map((s) => `t-${runId}-${s}`));
  } finally {
    redis.disconnect();
  }
}

/** Ports of every node of the run's Redis: the one server, or each node of the run's cluster. */
function nodesOf(runId: string, url: string): number[] {
  if (!url.includes("+cluster")) return [Number(new URL(url).port || 6379)];
  const state = JSON.parse(readFileSync(path.join(runClusterDir(runId), "cluster.json"), "utf8")) as { ports: number[] };
  return state.ports;
}
