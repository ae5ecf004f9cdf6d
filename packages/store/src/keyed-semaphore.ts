/**
 * Lets at most `limit` tasks with the same key run at once; the rest wait in
 * memory, in arrival order. Used so that a process sends only a few transactions
 * at a time to a hot account row: a short queue of Postgres row-lock waiters hands
 * the lock on quickly, a long one thrashes.
 */
export class KeyedSemaphore {
  private readonly state = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let s = this.state.get(key);
    if (!s) this.state.set(key, (s = { active: 0, waiting: [] }));
    if (s.active >= this.limit) await new Promise<void>((resolve) => s?.waiting.push(resolve));
    s.active += 1;
    try {
      return await task();
    } finally {
      s.active -= 1;
      const next = s.waiting.shift();
      if (next) next();
      else if (s.active === 0) this.state.delete(key);
    }
  }

  get size(): number {
    return this.state.size;
  }
}
