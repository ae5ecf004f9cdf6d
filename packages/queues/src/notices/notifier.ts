import type { RedisClient } from "../connection";
import type { Fleet } from "../fleet";
import { noticeChannels, openNotice, routeTags, sealNotice } from "./seal";

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
 *
 * Notices are sealed with the fleet's key (./seal.ts): one that does not open — sent
 * by anyone else who can write to Redis, or by another fleet — is dropped unread, and
 * a subscriber sees neither the id nor the answer.
 */

/**
 * Largest answer a notice carries. Every gateway subscribed receives every
 * notice, so a large one costs each of them; past this the notice carries no
 * answer and the waiter reads the store as it would without one.
 */
export const MAX_ANSWER_NOTICE_BYTES = 16 * 1024;

/** Announces `id` complete; `answer` (JSON text) travels with it, sealed, when it fits MAX_ANSWER_NOTICE_BYTES. */
export async function publishCompletion(redis: RedisClient, fleet: Fleet, id: string, answer?: string): Promise<void> {
  const carried = answer !== undefined && Buffer.byteLength(answer) <= MAX_ANSWER_NOTICE_BYTES ? answer : undefined;
  const { channel, message } = sealNotice(fleet.keys, fleet.prefix, id, carried);
  await redis.spublish(channel, message);
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

  private readonly channels: string[];

  constructor(
    private readonly subscriber: RedisClient,
    private readonly fleet: Fleet,
    private readonly onRefused: () => void = () => undefined,
  ) {
    this.channels = noticeChannels(fleet.keys, fleet.prefix);
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.subscriber.on("smessage", (channel: string, message: string) => {
      if (!this.channels.includes(channel)) return;
      // Waiters are filed under the routing tag: a notice for nobody here is not even opened.
      const space = message.indexOf(" ");
      const tag = space < 0 ? message : message.slice(0, space);
      const set = this.waiters.get(tag);
      if (!set) return;
      const opened = space < 0 ? null : openNotice(this.fleet.keys, channel, tag, message.slice(space + 1));
      if (!opened) {
        this.onRefused();
        return;
      }
      this.waiters.delete(tag);
      const wake: Wake = opened.answer === undefined ? { woken: true } : { woken: true, answer: opened.answer };
      for (const release of set) release(wake);
    });
    // One call per channel: on a cluster, two channels may belong to different shards.
    for (const channel of this.channels) await this.subscriber.ssubscribe(channel);
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
    // Filed under the id's tag for every accepted key (two while a key is rotated).
    const tags = routeTags(this.fleet.keys, id);
    return new Promise((resolve) => {
      const finish = (wake: Wake) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        for (const tag of tags) {
          const set = this.waiters.get(tag);
          set?.delete(finish);
          if (set && set.size === 0) this.waiters.delete(tag);
        }
        resolve(wake);
      };
      const onAbort = () => finish(NOT_WOKEN);
      const timer = setTimeout(() => finish(NOT_WOKEN), ms);
      for (const tag of tags) {
        let set = this.waiters.get(tag);
        if (!set) this.waiters.set(tag, (set = new Set()));
        set.add(finish);
      }
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
