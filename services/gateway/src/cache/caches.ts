import type pg from "pg";
import type { CheckCode } from "@svc/domain";
import type { Logger } from "@svc/process";
import { keyHashIsLive, listenForCacheInvalidations, liveKeyPrefixPage, type CheckOffer, type KeyRecord } from "@svc/store";
import { LiveKeySet } from "./live-keys";
import { TtlCache } from "./ttl-cache";

export type GatewayCaches = {
  /** Key records by key-hash hex. */
  keys: TtlCache<string, KeyRecord>;
  /** Check offers (prices, switches) by account id; "" = the public catalog. */
  offers: TtlCache<string, Map<CheckCode, CheckOffer>>;
  /** Hash prefixes of every live key, to refuse forged keys without a query. */
  liveKeys: LiveKeySet;
};

export function createCaches(): GatewayCaches {
  return { keys: new TtlCache(60_000, 100_000), offers: new TtlCache(60_000, 100_000), liveKeys: new LiveKeySet() };
}

/** Live keys read per query while loading the set (512 KB of prefixes a page). */
const LIVE_KEY_PAGE = 65_536;
/** Reload the set this often anyway, dropping keys that expired since the last load. */
const LIVE_KEY_RELOAD_MS = 6 * 3600_000;
/** After a failed load, try again after this long (the database is asked meanwhile). */
const LIVE_KEY_RETRY_MS = 5_000;

/**
 * Keeps the caches honest: LISTENs on `svc_cache` (see the cache_invalidation and
 * api_keys_notify_on_insert migrations) and drops what changed. While the
 * listening connection is down the caches are switched off and the live-key set is
 * not trusted, so a missed notification can never serve a revoked key nor refuse a
 * new one.
 *
 * The live-key set is loaded over the listening connection itself, after LISTEN, in
 * the background (the gateway serves meanwhile, asking the database), and each
 * key notification is settled by reading the key's row on that same connection,
 * so reads and notifications are seen in the order Postgres sent them.
 */
export class CacheInvalidator {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private reload: NodeJS.Timeout | null = null;
  /** Generation of the load under way, 0 when none. */
  private loading = 0;
  /**
   * Statements on the listening connection run one after another, in the order
   * they were asked for (a key's read must follow what was read before it); the
   * chain does explicitly what pg's deprecated per-client queue did implicitly.
   */
  private tail: Promise<unknown> = Promise.resolve();

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(work, work);
    this.tail = run.catch(() => undefined);
    return run;
  }
  /** Keys whose row is being read after a notification → announced again meanwhile. */
  private readonly settling = new Map<string, boolean>();

  constructor(
    private readonly databaseUrl: string,
    private readonly caches: GatewayCaches,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.setEnabled(false);
    const client = await listenForCacheInvalidations({
      databaseUrl: this.databaseUrl,
      applicationName: "gateway-cache",
      onNotification: (payload) => this.apply(payload ?? "all"),
      onLost: (lost) => this.reconnect(lost),
    });
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.setEnabled(true);
    void this.loadLiveKeys(client, true);
    if (!this.reload) this.reload = setInterval(() => this.refreshLiveKeys(), LIVE_KEY_RELOAD_MS).unref();
  }

  apply(payload: string): void {
    if (payload.startsWith("key:")) {
      const hex = payload.slice(4);
      this.caches.keys.delete(hex);
      this.caches.liveKeys.noteChanged(hex);
      this.settleLiveKey(hex);
    } else if (payload.startsWith("account:")) {
      const accountId = payload.slice(8);
      this.caches.keys.deleteWhere((k) => k.account_id === accountId);
      this.caches.offers.delete(accountId);
    } else {
      this.caches.keys.clear();
      this.caches.offers.clear();
    }
  }

  /**
   * Reads the named key's row after its notification and records whether it is
   * live. The read goes over the listening connection, after everything already
   * asked of it (inTurn), so it sees at least the change announced. If the key is announced
   * again while its read is out, that result may predate the newer change: it is
   * dropped (the key stays "maybe live") and the key is read again.
   */
  private settleLiveKey(hex: string): void {
    const client = this.client;
    if (!client) return;
    if (this.settling.has(hex)) {
      this.settling.set(hex, true);
      return;
    }
    this.settling.set(hex, false);
    this.inTurn(() => keyHashIsLive(client, Buffer.from(hex, "hex"))).then(
      (live) => {
        if (this.client !== client) return;
        const announcedAgain = this.settling.get(hex);
        this.settling.delete(hex);
        if (announcedAgain) {
          this.settleLiveKey(hex);
          return;
        }
        this.caches.liveKeys.settle(hex, live);
        if (this.caches.liveKeys.needsFolding) this.refreshLiveKeys();
      },
      // The key stays "maybe live": a lookup decides, as for any key the set cannot rule out.
      () => {
        if (this.client === client) this.settling.delete(hex);
      },
    );
  }

  /** Reads every live key's hash prefix into a new base for the set. */
  private async loadLiveKeys(client: pg.Client, fresh: boolean): Promise<void> {
    const set = this.caches.liveKeys;
    const generation = set.beginLoad(fresh);
    this.loading = generation;
    try {
      const pages: Buffer[] = [];
      let after: Buffer = Buffer.alloc(0);
      for (;;) {
        if (this.client !== client || !set.isCurrent(generation)) return;
        const from = after;
        const page = await this.inTurn(() => liveKeyPrefixPage(client, from, LIVE_KEY_PAGE));
        if (page.count > 0) pages.push(page.prefixes);
        if (page.count < LIVE_KEY_PAGE || !page.last) break;
        after = page.last;
      }
      if (this.client === client && set.finishLoad(generation, Buffer.concat(pages))) {
        this.logger.info(set.stats(), "live key set loaded");
      }
    } catch (err) {
      if (this.client !== client || this.stopped) return;
      this.logger.warn({ err }, "live key set load failed; keys are looked up until it loads");
      setTimeout(() => {
        if (this.client === client && set.isCurrent(generation)) void this.loadLiveKeys(client, fresh);
      }, LIVE_KEY_RETRY_MS).unref();
    } finally {
      if (this.loading === generation) this.loading = 0;
    }
  }

  /** A background reload that keeps answering from the current set until it is done. */
  private refreshLiveKeys(): void {
    if (this.loading !== 0 || !this.client || !this.caches.liveKeys.isTrusted) return;
    void this.loadLiveKeys(this.client, false);
  }

  private setEnabled(enabled: boolean): void {
    this.caches.keys.setEnabled(enabled);
    this.caches.offers.setEnabled(enabled);
    if (!enabled) this.caches.liveKeys.distrust();
  }

  private reconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.settling.clear();
    this.setEnabled(false);
    if (this.stopped) return;
    this.logger.warn("cache invalidation connection lost; caching off until it is back");
    this.restartSoon();
  }

  /** Tries to listen again every second until it works (it once gave up after one failed try). */
  private restartSoon(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (this.stopped) return;
      this.start().catch(() => this.restartSoon());
    }, 1_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.reload) clearInterval(this.reload);
    const client = this.client;
    this.client = null;
    this.setEnabled(false);
    await client?.end().catch(() => undefined);
  }
}
