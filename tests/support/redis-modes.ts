import { redisUrl } from "./pg-admin";
import { testClusterUrl } from "./redis-cluster";

/**
 * The Redis deployments a test of Redis-facing code runs against, as
 * `describe.each(redisModes())`: the run's one Redis and the run's local Redis Cluster.
 * In the cluster leg (SVC_TEST_REDIS=cluster) the run's Redis is that cluster, so once.
 * Each is a name and a function giving its REDIS_URL (the cluster starts when first asked).
 */
export function redisModes(): Array<[string, () => string]> {
  if (process.env.SVC_TEST_REDIS === "cluster") return [["a Redis Cluster", redisUrl]];
  return [
    ["one Redis", redisUrl],
    ["a Redis Cluster", testClusterUrl],
  ];
}
