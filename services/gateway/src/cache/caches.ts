import pg from "pg";
import type { CheckCode } from "@svc/domain";
import type { Logger } from "@svc/runtime";
import type { CheckOffer, KeyRecord } from "@svc/store";
import { TtlCache } from "./ttl-cache";

export type GatewayCaches = {
  /** Key records by key-hash hex. */
  keys: TtlCache<string, KeyRecord>;
  /** Check offers (prices, switches) by account id; "" = the public catalog. */
  offers: TtlCache<string, Map<CheckCode, CheckOffer>>;
};

export function createCaches(): GatewayCaches {
  return { keys: new TtlCache(60_000, 100_000), offers: new TtlCache(60_000, 100_000) };
}

/**
 * Keeps the caches honest: LISTENs on `svc_cache` (see the cache_invalidation
 * migration) and drops what changed. While the listening connection is down the
 * caches are switched off, so a missed notification can never serve a revoked key.
 */
export class CacheInvalidator {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly databaseUrl: string,
    private readonly caches: GatewayCaches,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.setEnabled(false);
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: "gateway-cache" });
    client.on("notification", (msg) => this.apply(msg.payload ?? "all"));
    client.on("error", () => this.reconnect(client));
    client.on("end", () => this.reconnect(client));
    await client.connect();
    await client.query("LISTEN svc_cache");
    this.client = client;
    this.setEnabled(true);
  }

  apply(payload: string): void {
    if (payload.startsWith("key:")) {
      this.caches.keys.delete(payload.slice(4));
    } else if (payload.startsWith("account:")) {
      const accountId = payload.slice(8);
      this.caches.keys.deleteWhere((k) => k.account_id === accountId);
      this.caches.offers.delete(accountId);
    } else {
      this.caches.keys.clear();
      this.caches.offers.clear();
    }
  }

  private setEnabled(enabled: boolean): void {
    this.caches.keys.setEnabled(enabled);
    this.caches.offers.setEnabled(enabled);
  }

  private reconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.setEnabled(false);
    if (this.stopped) return;
    this.logger.warn("cache invalidation connection lost; caching off until it is back");
    this.retry = setTimeout(() => {
      this.start().catch(() => this.reconnect(client));
    }, 1_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.setEnabled(false);
    await client?.end().catch(() => undefined);
  }
}
