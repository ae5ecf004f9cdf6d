import { insertLookup, insertTestLookups, type NewLookup, type Store } from "@svc/store";

type Entry<T> = { item: T; resolve: () => void; reject: (err: unknown) => void };

/**
 * Group commit: writes that arrive while earlier ones are in flight are written together
 * by one `writeMany`. A write arriving when fewer than `maxInFlight` are in flight goes
 * out at once, alone (no added latency when idle); the others wait for a slot and leave
 * as one batch of at most `maxBatch`. Each `add` settles when its own item is stored.
 * A failed batch is written again one item at a time with `writeOne`, so one bad item
 * fails only its own caller, and a deadlock or serialization failure is simply retried.
 *
 * Not a library: dataloader batches per event-loop turn and @yornaath/batshit per time
 * window; neither sends the first call at once and coalesces only while writes are in
 * flight, which is what keeps an idle request's latency unchanged.
 */
export class GroupCommit<T> {
  private queue: Entry<T>[] = [];
  private inFlight = 0;
  private idle: Array<() => void> = [];

  constructor(
    private readonly writeMany: (items: T[]) => Promise<void>,
    private readonly writeOne: (item: T) => Promise<void>,
    private readonly limits: { maxInFlight: number; maxBatch: number },
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once nothing is queued or in flight (shutdown: before the pool closes). */
  async drain(): Promise<void> {
    while (this.inFlight > 0 || this.queue.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight += 1;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const wake of this.idle.splice(0)) wake();
      });
    }
  }

  private async write(batch: Entry<T>[]): Promise<void> {
    const one = (e: Entry<T>) => this.writeOne(e.item).then(e.resolve, e.reject);
    if (batch.length === 1) return one(batch[0] as Entry<T>);
    try {
      await this.writeMany(batch.map((e) => e.item));
    } catch {
      await Promise.all(batch.map(one));
      return;
    }
    for (const e of batch) e.resolve();
  }
}

/**
 * Test lookups without an Idempotency-Key claim, group-committed: every lookup of a
 * key counts on the same daily_usage rows, so one autocommit statement per request
 * makes concurrent requests of a key queue on those row locks through each commit's
 * WAL flush; a batch takes them once, and costs one round trip and one commit for
 * several requests. Two batches in flight per process keep the pool free for
 * everything else; 64 lookups keep one statement's JSON small.
 */
export function testLookupWriter(store: Store): GroupCommit<NewLookup> {
  return new GroupCommit<NewLookup>(
    (lookups) => insertTestLookups(store.pool, lookups),
    (lookup) => insertLookup(store.pool, lookup),
    { maxInFlight: 2, maxBatch: 64 },
  );
}
