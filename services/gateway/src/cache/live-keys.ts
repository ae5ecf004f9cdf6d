import { LIVE_KEY_PREFIX_BYTES } from "@svc/store";

/**
 * Which keys exist, so that a forged key is refused without a database query.
 *
 * Keys with a valid checksum are easy to make up, and each unknown one used to cost
 * a lookup; refusing them by network (as before) also refused real keys behind the
 * same NAT. This set answers "might this key hash belong to a live key?" from
 * memory instead:
 *
 * - the base: the first 8 bytes of every live key's hash (not revoked, not expired
 *   when loaded), sorted, in one buffer: 8 bytes a key, 8 MB per million keys per
 *   gateway process, searched by bisection (about 24 steps at ten million keys);
 * - overrides: what each `key:<hash>` notification since the load said, by full
 *   hash (true = live, false = revoked or deleted). A notification first marks its
 *   key live at once (a new key works as soon as its insert is announced), then the
 *   key's row decides (CacheInvalidator). Overrides are folded into a new base by a
 *   background reload when they pile up.
 *
 * Answers err only towards "maybe": a forged key matches a base prefix with
 * probability (live keys) / 2^64, and a key that expired since the load stays in
 * until the next reload; either way the key cache or the database has the last
 * word. A live key is never answered "no" while the set is trusted, because every
 * change to a key is announced (on commit) on the connection that also loads it.
 * While that connection is down or the base is not loaded, `mightExist` answers
 * null: ask the database.
 */
export class LiveKeySet {
  static readonly PREFIX_BYTES = LIVE_KEY_PREFIX_BYTES;
  /** Overrides beyond which a reload folds them into the base. */
  static readonly FOLD_AFTER = 10_000;

  private base: Buffer = Buffer.alloc(0);
  private readonly overrides = new Map<string, boolean>();
  private trusted = false;
  private generation = 0;
  private waiting: Array<() => void> = [];

  /** Confirmations of a "no" the database may still be asked for (see takeMissConfirmation). */
  private tokens: number;
  private tokensAt = 0;

  constructor(
    /** Database confirmations of a "no" per second, per process (burst the same). */
    private readonly confirmationsPerSecond = 20,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = confirmationsPerSecond;
  }

  /** true: may be live, look it up; false: not a live key; null: the set cannot tell now. */
  mightExist(hash: Buffer): boolean | null {
    if (!this.trusted) return null;
    const override = this.overrides.get(hash.toString("hex"));
    if (override !== undefined) return override;
    return this.baseHas(hash);
  }

  /** A notification named this key: treat it as live until its row says otherwise. */
  noteChanged(hashHex: string): void {
    this.overrides.set(hashHex, true);
  }

  /** What the key's row says now (read after the notification that named it). */
  settle(hashHex: string, live: boolean): void {
    this.overrides.set(hashHex, live);
  }

  /**
   * A database confirmation for a "no", from a small per-process budget: it covers
   * the instant between a key's insert committing and its announcement reaching
   * this process, at a bounded cost however many forged keys arrive.
   */
  takeMissConfirmation(): boolean {
    const now = this.clock();
    this.tokens = Math.min(this.confirmationsPerSecond, this.tokens + ((now - this.tokensAt) / 1000) * this.confirmationsPerSecond);
    this.tokensAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * Starts a load; returns its generation. A fresh load (at start-up or after the
   * listening connection came back, when notifications may have been missed) drops
   * everything and answers null until it finishes; a refresh keeps answering from
   * what it has.
   */
  beginLoad(fresh: boolean): number {
    this.generation += 1;
    if (fresh) {
      this.trusted = false;
      this.overrides.clear();
      this.base = Buffer.alloc(0);
    }
    return this.generation;
  }

  isCurrent(generation: number): boolean {
    return generation === this.generation;
  }

  /**
   * Installs a loaded base (sorted prefixes, PREFIX_BYTES each) unless a newer load
   * or a disconnection superseded it, and folds in the overrides it already agrees
   * with. Every change committed after the load's first page was read was announced
   * (the connection was listening before it), so an override is never older than
   * the base for its key; dropping one that the base already says is safe.
   */
  finishLoad(generation: number, base: Buffer): boolean {
    if (generation !== this.generation) return false;
    if (base.length % LiveKeySet.PREFIX_BYTES !== 0) throw new Error("live key prefixes must be whole");
    this.base = base;
    for (const [hex, live] of this.overrides) {
      if (live === this.baseHas(Buffer.from(hex, "hex"))) this.overrides.delete(hex);
    }
    this.trusted = true;
    for (const wake of this.waiting.splice(0)) wake();
    return true;
  }

  /** The listening connection is gone: notifications may be missed from now on. */
  distrust(): void {
    this.generation += 1;
    this.trusted = false;
  }

  get isTrusted(): boolean {
    return this.trusted;
  }

  /** Resolves once the set answers (tests; start-up does not wait: it asks the database meanwhile). */
  whenTrusted(): Promise<void> {
    return this.trusted ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  get needsFolding(): boolean {
    return this.overrides.size > LiveKeySet.FOLD_AFTER;
  }

  stats(): { keys: number; overrides: number; bytes: number } {
    return { keys: this.base.length / LiveKeySet.PREFIX_BYTES, overrides: this.overrides.size, bytes: this.base.length };
  }

  /** Bisection over the sorted 8-byte big-endian prefixes, compared as two 32-bit halves. */
  private baseHas(hash: Buffer): boolean {
    const hi = hash.readUInt32BE(0);
    const lo = hash.readUInt32BE(4);
    let low = 0;
    let high = this.base.length / LiveKeySet.PREFIX_BYTES - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const at = mid * LiveKeySet.PREFIX_BYTES;
      const h = this.base.readUInt32BE(at);
      const l = this.base.readUInt32BE(at + 4);
      if (h === hi && l === lo) return true;
      if (h < hi || (h === hi && l < lo)) low = mid + 1;
      else high = mid - 1;
    }
    return false;
  }
}
