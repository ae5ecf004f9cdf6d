import type { Queue } from "bullmq";
import type { RedisClient } from "./connection";
import { metrics, onScrape } from "@svc/metrics";

const STATES = ["waiting", "active", "delayed", "failed"] as const;

/**
 * When the message at the head of the wait list became ready to run: its creation
 * time plus the delay it was added with (a scheduled completion, a webhook retry),
 * or the start of its last attempt if BullMQ retried it. BullMQ zeroes the hash's
 * `delay` when it promotes a delayed message, so the delay is read from its options.
 */
function readyAt(fields: Array<string | null>): number | null {
  const [timestamp, opts, processedOn] = fields;
  if (!timestamp) return null;
  let delay = 0;
  try {
    delay = Number((JSON.parse(opts ?? "{}") as { delay?: unknown }).delay ?? 0) || 0;
  } catch {
    // unreadable options: count from creation
  }
  return Math.max(Number(timestamp) + delay, Number(processedOn ?? 0) || 0);
}

/**
 * Exports a queue's depth by state and the age of its oldest waiting message,
 * read from Redis when scraped (one MULTI of counts, one LINDEX, one HMGET) and
 * reused for 5 s, so a 15 s scrape by several scrapers (Prometheus, KEDA) costs
 * Redis next to nothing. When Redis cannot be read the queue's series disappear
 * rather than show stale figures. "waiting" includes prioritized messages.
 */
export function watchQueue(queue: Queue, redis: RedisClient): void {
  const name = queue.name;
  onScrape(
    `queue ${name}`,
    async () => {
      const messages = metrics.queueMessages();
      const age = metrics.queueOldestWaitingAge();
      try {
        const counts = await queue.getJobCounts("waiting", "prioritized", "active", "delayed", "failed");
        const oldestId = await redis.lindex(queue.keys.wait as string, -1);
        const fields = oldestId ? await redis.hmget(queue.toKey(oldestId), "timestamp", "opts", "processedOn") : null;
        const since = fields ? readyAt(fields) : null;
        for (const state of STATES) {
          const n = (counts[state] ?? 0) + (state === "waiting" ? (counts.prioritized ?? 0) : 0);
          messages.set({ queue: name, state }, n);
        }
        age.set({ queue: name }, since === null ? 0 : Math.max(0, (Date.now() - since) / 1000));
      } catch {
        for (const state of STATES) messages.remove({ queue: name, state });
        age.remove({ queue: name });
      }
    },
    { cacheMs: 5_000 },
  );
}
