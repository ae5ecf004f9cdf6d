import type { RedisClient } from "./connection";

/**
 * Completion notices over Redis sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7), so a
 * request holding `wait` seconds wakes the moment its lookup or job finishes instead
 * of polling the database. Sharded, because on a Redis Cluster a classic PUBLISH is
 * copied to every node of the cluster, while a sharded channel lives on the shard
 * owning its slot; a single Redis 7 serves the same commands, so both take one path.
 * A notice is a hint, or at most an answer for the one request that created the
 * lookup (see LookupAnswer): every other waiter re-reads Postgres, and still re-reads
 * once at its deadline, so a lost notice (a failover moving the channel's shard)
 * costs latency, never correctness.
 */
export function completionChannel(prefix: string): string {
  return `${prefix}:completed`;
}

/**
 * Largest notice that carries an answer. Every gateway subscribed receives every
 * notice, so a large one costs each of them; past this the notice is the id alone
 * and the waiter reads the store as it would without one.
 */
export const MAX_ANSWER_NOTICE_BYTES = 16 * 1024;

/**
 * Announces `id` complete. `answer` (JSON text) travels with it when the whole
 * notice fits MAX_ANSWER_NOTICE_BYTES. The message is the id, then a space and the
 * answer: a replica without a waiter for the id reads only up to the space.
 */
export async function publishCompletion(redis: RedisClient, prefix: string, id: string, answer?: string): Promise<void> {
  const carried = answer !== undefined && id.length + 1 + Buffer.byteLength(answer) <= MAX_ANSWER_NOTICE_BYTES;
  await redis.spublish(completionChannel(prefix), carried ? `${id} ${answer}` : id);
}

/**
 * What a live lookup's notice carries so the request waiting for it can answer
 * without reading it back: the completion time and every row's checks exactly as
 * the completing statement stored them (jsonb's key order, what a read returns).
 * Never identifiers: the waiting request has its own rows for those.
 */
export type LookupAnswer = { completed_at: string; rows: Array<{ row_no: number; checks: unknown[] }> };

export function lookupAnswerText(completedAt: Date, rows: LookupAnswer["rows"]): string {
  const answer: LookupAnswer = { completed_at: completedAt.toISOString(), rows };
  return JSON.stringify(answer);
}

/** A notice's answer, checked for shape (it crossed Redis); null when it is not one. */
export function readLookupAnswer(text: string): LookupAnswer | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const answer = value as Partial<LookupAnswer> | null;
  if (typeof answer !== "object" || answer === null || typeof answer.completed_at !== "string" || !Array.isArray(answer.rows)) return null;
  const rowsOk = answer.rows.every((r: unknown) => {
    const row = r as Partial<LookupAnswer["rows"][number]> | null;
    return typeof row === "object" && row !== null && Number.isInteger(row.row_no) && Array.isArray(row.checks);
  });
  return rowsOk ? (answer as LookupAnswer) : null;
}

/** How a wait ended: `woken` by a notice (with the answer it carried, if any), or not (timeout, abort, shutdown). */
export type Wake = { woken: boolean; answer?: string };

const NOT_WOKEN: Wake = { woken: false };

export class CompletionWaiter {
  private readonly waiters = new Map<string, Set<(wake: Wake) => void>>();
  private started = false;
  private closed = false;

  constructor(
    private readonly subscriber: RedisClient,
    private readonly prefix: string,
  ) {}

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.subscriber.on("smessage", (channel: string, message: string) => {
      if (channel !== completionChannel(this.prefix)) return;
      const space = message.indexOf(" ");
      const id = space < 0 ? message : message.slice(0, space);
      const set = this.waiters.get(id);
      if (!set) return;
      this.waiters.delete(id);
      const wake: Wake = space < 0 ? { woken: true } : { woken: true, answer: message.slice(space + 1) };
      for (const release of set) release(wake);
    });
    await this.subscriber.ssubscribe(completionChannel(this.prefix));
  }

  /**
   * Resolves when `id` is announced complete, when `ms` pass, or when `signal`
   * aborts (client went away). Returns true if woken by a notice.
   */
  async wait(id: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    return (await this.waitForAnswer(id, ms, signal)).woken;
  }

  /** wait(), also giving the answer the notice carried: for the one caller that can check it against its own rows. */
  waitForAnswer(id: string, ms: number, signal?: AbortSignal): Promise<Wake> {
    // An already-aborted signal never fires "abort" again: answer now instead of at the timeout.
    if (ms <= 0 || this.closed || signal?.aborted) return Promise.resolve(NOT_WOKEN);
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const finish = (wake: Wake) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set?.delete(finish);
        if (set && set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve(wake);
      };
      const onAbort = () => finish(NOT_WOKEN);
      const timer = setTimeout(() => finish(NOT_WOKEN), ms);
      set.add(finish);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Wakes every waiter and refuses new waits: on shutdown held requests answer now. */
  close(): void {
    this.closed = true;
    for (const set of this.waiters.values()) for (const release of set) release(NOT_WOKEN);
    this.waiters.clear();
  }

  /** True after close(): callers should answer with what they have instead of waiting. */
  get isClosed(): boolean {
    return this.closed;
  }

  get size(): number {
    return this.waiters.size;
  }
}
