import pg from "pg";
import type { Logger } from "@svc/process";
import { beginReadOnlySnapshot, currentWalPosition, endReadOnlySnapshot, replayedWalPosition } from "@svc/store";
import { metrics } from "@svc/metrics";

/** The reads that may go to the replica (the label of svc_db_reads_total). */
export type ReplicaRead = "lookup" | "results" | "download" | "usage";
const READS: readonly ReplicaRead[] = ["lookup", "results", "download", "usage"];

/** Why a read meant for the replica went to the primary. */
type Fallback = "unavailable" | "error" | "behind" | "busy";

/**
 * Every connection of the pool is in use (streamed downloads hold theirs for seconds):
 * waiting for one would end in the pool's connect timeout, which says nothing about
 * the replica's health. Such a read goes to the primary at once instead.
 */
function saturated(pool: pg.Pool): boolean {
  return pool.waitingCount > 0 || (pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10));
}

/** How often each gateway process measures the replica's lag (and finds a set-aside replica well again). */
export const REPLICA_PROBE_INTERVAL_MS = 1_000;
/** A probe that takes longer than this fails (the replica is set aside until one succeeds). */
const PROBE_TIMEOUT_MS = 2_000;
/**
 * A statement on the replica that has not answered in this long fails, its connection
 * is dropped, and the read goes to the primary: a replica host gone without a reset
 * would otherwise hold the request for the kernel's retransmission time (many minutes).
 */
export const REPLICA_STATEMENT_TIMEOUT_MS = 5_000;
/** Primary WAL positions remembered to date the replica's position with: a minute at one a second. */
const SAMPLES = 60;

/**
 * A replica connection holding one read-only snapshot, for reads of more than one
 * statement. `release(true)` drops the connection (a read that failed or was cut
 * short mid-stream) instead of ending the transaction and pooling it again.
 */
export type ReplicaSnapshot = { client: pg.PoolClient; release(destroy?: boolean): Promise<void> };

/**
 * Which database answers the reads that tolerate lag (docs/architecture.md, "Read
 * replica"). Callers ask the replica first and check that what it returned is
 * current enough for the read (a completed lookup; a finished job whose finishing
 * commit the replica has replayed); anything else is read from the primary. A
 * replica that is not configured, unreachable, or measured more than
 * DATABASE_REPLICA_MAX_LAG_MS behind is not asked at all.
 *
 * Lag is measured from WAL positions, not replay timestamps (which read as lag
 * whenever the primary is idle, and as no lag when the standby stopped receiving):
 * once a second the primary's current position is sampled, and the replica's lag is
 * the age of the newest sample it has replayed past. A server that is not a
 * streaming standby (a copy, a logical replica) cannot be measured and counts as
 * current — unless it was a standby earlier in this process's life: a standby that
 * has been promoted no longer follows the primary, and gets no reads.
 * The probe has a connection of its own, outside the pool, so it measures even
 * while streamed downloads hold every pooled one.
 *
 * A read that fails on the replica sets it aside until the next probe succeeds, so
 * a replica that dies costs the requests in flight one failed attempt each, not a
 * connect timeout per request.
 */
export class ReplicaReads {
  private usable = false;
  private timer: NodeJS.Timeout | undefined;
  private samples: Array<{ at: number; lsn: bigint }> = [];
  private probing: Promise<void> | null = null;
  private warned = false;
  private stopped = false;
  /** Whether the replica has been seen replaying as a standby (then "not in recovery" means promoted). */
  private wasStandby = false;
  private probeClient: pg.Client | null = null;

  constructor(
    private readonly primary: pg.Pool,
    private readonly replica: pg.Pool | null,
    private readonly options: { maxLagMs: number; logger: Logger; now?: () => number },
  ) {
    for (const read of READS) {
      metrics.dbReads().inc({ read, target: "primary" }, 0);
      if (replica) {
        metrics.dbReads().inc({ read, target: "replica" }, 0);
        for (const reason of ["unavailable", "error", "behind"] as const) metrics.replicaFallbacks().inc({ read, reason }, 0);
      }
    }
    if (replica) metrics.replicaUsable().set(0);
  }

  /** True when reads are sent to the replica now. */
  get inUse(): boolean {
    return this.replica !== null && this.usable;
  }

  /**
   * Probes once (awaited, so a healthy replica takes reads from the first request;
   * one that is down only logs a warning), then every REPLICA_PROBE_INTERVAL_MS.
   */
  async start(): Promise<void> {
    if (!this.replica) return;
    await this.probe();
    this.timer = setInterval(() => void this.probe(), REPLICA_PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.dropProbeClient();
  }

  /**
   * Runs `query` on the replica and returns what it read when `accept` takes it;
   * undefined when the replica is not in use, the read failed there, or `accept`
   * refused it — then the caller reads the primary (counted here as such).
   * `snapshot`: the statements run in one read-only REPEATABLE READ transaction
   * (one standby's one point in time, even behind a pooler or a balancer).
   */
  async read<T>(read: ReplicaRead, query: (sql: pg.PoolClient) => Promise<T>, accept: (value: T) => boolean, snapshot = false): Promise<{ value: T } | undefined> {
    const refused = this.refusal();
    if (refused !== null) return this.primaryRead(read, refused);
    const c = await this.connection(snapshot);
    if (!c) return this.primaryRead(read, "error");
    let value: T;
    try {
      value = await timed(query(c.client));
    } catch (err) {
      this.setAside(err);
      await c.release(true);
      return this.primaryRead(read, "error");
    }
    await c.release();
    if (!accept(value)) return this.primaryRead(read, "behind");
    this.replicaRead(read);
    return { value };
  }

  /**
   * A replica connection in a read-only snapshot in which `current` holds, for a read
   * the caller drives itself (a streamed download) and must release; null when the
   * replica is not in use, fails, or `current` is false — then the caller reads the
   * primary (counted here as such).
   */
  async snapshotWhere(read: ReplicaRead, current: (client: pg.PoolClient) => Promise<boolean>): Promise<ReplicaSnapshot | null> {
    const refused = this.refusal();
    if (refused !== null) return this.primaryRead(read, refused) ?? null;
    const s = await this.connection(true);
    if (!s) return this.primaryRead(read, "error") ?? null;
    let ok: boolean;
    try {
      ok = await timed(current(s.client));
    } catch (err) {
      this.setAside(err);
      await s.release(true);
      return this.primaryRead(read, "error") ?? null;
    }
    if (!ok) {
      await s.release();
      return this.primaryRead(read, "behind") ?? null;
    }
    this.replicaRead(read);
    return s;
  }

  /** Why a read may not go to the replica now: none configured (undefined), or a fallback reason; null when it may. */
  private refusal(): Fallback | undefined | null {
    if (!this.replica) return undefined;
    if (!this.usable) return "unavailable";
    if (saturated(this.replica)) return "busy";
    return null;
  }

  /** Counts a read the replica answered. */
  replicaRead(read: ReplicaRead): void {
    metrics.dbReads().inc({ read, target: "replica" });
  }

  /** Counts a read the primary answered (and why, when a replica is configured); returns undefined for `read`'s callers. */
  primaryRead(read: ReplicaRead, reason?: Fallback): undefined {
    metrics.dbReads().inc({ read, target: "primary" });
    if (reason && this.replica) this.fallback(read, reason);
    return undefined;
  }

  private fallback(read: ReplicaRead, reason: Fallback): void {
    metrics.replicaFallbacks().inc({ read, reason });
  }

  /**
   * A pooled replica connection, in a read-only REPEATABLE READ transaction when
   * `inSnapshot`; null (and the replica set aside) when it cannot be had.
   */
  private async connection(inSnapshot: boolean): Promise<ReplicaSnapshot | null> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.replica!.connect();
      if (inSnapshot) await timed(beginReadOnlySnapshot(client));
    } catch (err) {
      // A connection that failed on BEGIN is dropped, not returned to the pool.
      client?.release(true);
      this.setAside(err);
      return null;
    }
    const held = client;
    let released = false;
    return {
      client: held,
      release: async (destroy?: boolean) => {
        if (released) return;
        released = true;
        if (destroy) return held.release(true);
        try {
          if (inSnapshot) await timed(endReadOnlySnapshot(held));
          held.release();
        } catch {
          held.release(true);
        }
      },
    };
  }

  /** The replica failed a read: no more reads on it until a probe succeeds. */
  private setAside(err: unknown): void {
    if (this.usable) this.options.logger.warn({ err: errorSummary(err) }, "read replica failed a read; reads go to the primary until it answers a probe");
    this.usable = false;
    metrics.replicaUsable().set(0);
  }

  /** One probe at a time; a slow one is not overlapped by the next tick. */
  probe(): Promise<void> {
    this.probing ??= this.measure().finally(() => (this.probing = null));
    return this.probing;
  }

  private async measure(): Promise<void> {
    const now = this.options.now ?? Date.now;
    let replayed: bigint | null;
    let abandoned = false;
    try {
      replayed = await withTimeout(
        (async () => {
          const at = now();
          this.samples.push({ at, lsn: await currentWalPosition(this.primary) });
          if (this.samples.length > SAMPLES) this.samples.shift();
          // A probe that timed out on the primary opens no replica connection afterwards.
          if (abandoned) throw new Error("probe abandoned");
          return replayedWalPosition(await this.probeConnection());
        })(),
        PROBE_TIMEOUT_MS,
      );
    } catch (err) {
      abandoned = true;
      // A probe connection that failed or hangs is not asked again: the next probe opens another.
      this.dropProbeClient();
      this.becomes(false, { err: errorSummary(err) }, "read replica unreachable; reads go to the primary until it answers");
      return;
    }
    if (replayed !== null) this.wasStandby = true;
    else if (this.wasStandby) {
      this.becomes(false, null, "read replica is no longer a standby (promoted?) and no longer follows the primary; reads go to the primary");
      return;
    }
    const lagMs = this.lagMs(replayed, now());
    const usable = lagMs !== null && lagMs <= this.options.maxLagMs;
    if (lagMs !== null) metrics.replicaLag().set(lagMs / 1000);
    this.becomes(usable, { lagMs, maxLagMs: this.options.maxLagMs }, "read replica is behind by more than DATABASE_REPLICA_MAX_LAG_MS; reads go to the primary until it catches up");
  }

  /** The probe's own replica connection (same settings as the pool's), opened when missing. */
  private async probeConnection(): Promise<pg.Client> {
    if (this.stopped) throw new Error("stopped");
    if (this.probeClient) return this.probeClient;
    const client = new pg.Client(this.replica!.options as pg.ClientConfig);
    client.on("error", () => undefined); // a lost connection fails the next probe, which drops it
    this.probeClient = client;
    await client.connect();
    return client;
  }

  private dropProbeClient(): void {
    const client = this.probeClient;
    this.probeClient = null;
    if (client) void client.end().catch(() => undefined);
  }

  /**
   * The age of the newest primary position the replica has replayed past; 0 for a
   * server that is not a streaming standby; null when it is behind every position
   * remembered (at least a minute, or since start-up).
   */
  private lagMs(replayed: bigint | null, now: number): number | null {
    if (replayed === null) return 0;
    for (let i = this.samples.length - 1; i >= 0; i -= 1) {
      const s = this.samples[i]!;
      if (s.lsn <= replayed) return Math.max(0, now - s.at);
    }
    return null;
  }

  private becomes(usable: boolean, detail: Record<string, unknown> | null, warning: string): void {
    // A probe still in flight when the pools close at shutdown says nothing worth a warning.
    if (this.stopped) return;
    if (usable && !this.usable) this.options.logger.info("read replica in use");
    if (!usable && (this.usable || !this.warned)) this.options.logger.warn(detail ?? {}, warning);
    if (!usable) this.warned = true;
    this.usable = usable;
    metrics.replicaUsable().set(usable ? 1 : 0);
  }
}

/** An error's code and message, never a connection string (pg's messages do not carry one). */
function errorSummary(err: unknown): Record<string, unknown> {
  const e = err as { code?: unknown; message?: unknown } | null;
  return { code: typeof e?.code === "string" ? e.code : undefined, message: typeof e?.message === "string" ? e.message : String(err) };
}

function timed<T>(work: Promise<T>): Promise<T> {
  return withTimeout(work, REPLICA_STATEMENT_TIMEOUT_MS);
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
