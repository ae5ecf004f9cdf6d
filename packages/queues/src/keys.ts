import type { QueueName } from "./catalog";

/**
 * Where a queue's BullMQ keys live: `{<REDIS_PREFIX>:bull:<queue>}:<queue>:wait` and
 * so on. The braces are a Redis Cluster hash tag: every key of one queue hashes to
 * one slot (BullMQ's Lua scripts touch several of them at once), and each queue of
 * each prefix to its own slot, so the queues spread over the cluster's masters.
 * The queue's name itself stays clean (metric labels, the dashboard). A single
 * Redis ignores the braces; the layout is the same there, so one code path serves both.
 */
export function queuePrefix(prefix: string, queue: QueueName): string {
  return `{${prefix}:bull:${queue}}`;
}

/**
 * The hash-tagged keys of a prefix begin with `{<REDIS_PREFIX>:`, the others with
 * `<REDIS_PREFIX>:`: the two SCAN patterns that find every key a fleet owns.
 */
export function keyPatternsOf(prefix: string): [string, string] {
  return [`${prefix}:*`, `{${prefix}:*`];
}
