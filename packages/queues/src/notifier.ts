import type { Redis } from "ioredis";

/**
 * Completion notices over Redis pub/sub, so a request holding `wait` seconds wakes
 * the moment its lookup or job finishes instead of polling the database. A notice
 * is only a hint: the waiter re-reads Postgres, and still re-reads once at its
 * deadline, so a lost notice costs latency, never correctness.
 */
export function completionChannel(prefix: string): string {
  return `${prefix}:completed`;
}

export async function publishCompletion(redis: Redis, prefix: string, id: string): Promise<void> {
  await redis.publish(completionChannel(prefix), id);
}

export class CompletionWaiter {
  private readonly waiters = new Map<string, Set<(woken: boolean) => void>>();
  private started = false;
  private closed = false;

  constructor(
    private readonly subscriber: Redis,
    private readonly prefix: string,
  ) {}

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.subscriber.on("message", (channel: string, id: string) => {
      if (channel !== completionChannel(this.prefix)) return;
      const set = this.waiters.get(id);
      if (!set) return;
      this.waiters.delete(id);
      for (const release of set) release(true);
    });
    await this.subscriber.subscribe(completionChannel(this.prefix));
  }

  /**
   * Resolves when `id` is announced complete, when `ms` pass, or when `signal`
   * aborts (client went away). Returns true if woken by a notice.
   */
  wait(id: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    // An already-aborted signal never fires "abort" again: answer now instead of at the timeout.
    if (ms <= 0 || this.closed || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set?.delete(finish);
        if (set && set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve(woken);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), ms);
      set.add(finish);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Wakes every waiter and refuses new waits: on shutdown held requests answer now. */
  close(): void {
    this.closed = true;
    for (const set of this.waiters.values()) for (const release of set) release(false);
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
