/**
 * A small in-process cache with a TTL and a size bound. Entries are also dropped
 * by explicit invalidation (Postgres notifications); the TTL only bounds how long a
 * missed notification could matter.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expires: number }>();
  /** Off until whoever keeps it honest (the invalidation listener) switches it on. */
  private enabled = false;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  set(key: K, value: V): void {
    if (!this.enabled) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expires: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (e.g. all keys of one account). */
  deleteWhere(match: (value: V, key: K) => boolean): void {
    for (const [k, e] of this.entries) if (match(e.value, k)) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  /** While invalidations cannot be received, the cache must not serve anything. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.entries.clear();
  }

  get isEnabled(): boolean {
    return this.enabled;
  }
}
