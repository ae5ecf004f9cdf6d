import { performance } from "node:perf_hooks";

/** How long a claim holds its row, and how often a live attempt renews it. */
export type LeaseSettings = { leaseMs: number; renewEveryMs: number };

/** Thrown (as the abort reason, and by `HeldLease.guard`) when an attempt lost its lease. */
export class LeaseLostError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "LeaseLostError";
  }
}

export type HeldLeaseOptions = {
  settings: LeaseSettings;
  /**
   * Extends the row's lease from `held` (the end this attempt last wrote) to
   * `until` if this attempt still holds it (its token, that very lease, not run out
   * at `now`); false when it no longer does. An error is a failed renewal: the lease
   * stands until its deadline, and a later renewal may succeed.
   */
  renew: (r: { held: Date; now: Date; until: Date }) => Promise<boolean>;
  /** The clock the row's lease is written with (the worker context's). */
  now: () => Date;
  /** Performance time read just before the claim was sent: the lease runs from there. */
  claimedAt: number;
  /** The lease's end as the claim wrote it. */
  leasedUntil: Date;
  onLost?: (reason: string) => void;
  onRenewError?: (err: unknown) => void;
  /** Called after each successful renewal (tests wait on it). */
  onRenewed?: () => void;
};

/**
 * One attempt's hold on a leased row (a job chunk, a live lookup), kept alive by
 * renewing it every `renewEveryMs` for as long as the attempt runs.
 *
 * The attempt gives itself up — `signal` aborts and `held` turns false — when a
 * renewal finds the row no longer its own (taken over, failed, cancelled), or when
 * no renewal has succeeded for `leaseMs - renewEveryMs` since the last one was
 * sent. That deadline is measured on this process's monotonic clock from before the
 * renewal left, so it always falls `renewEveryMs` before the lease that renewal
 * wrote runs out: an attempt that cannot reach the database, or whose event loop
 * stalled, stops before any other worker may claim the row. Workers' wall clocks
 * must agree to within that margin (NTP does far better).
 */
export class HeldLease {
  private readonly controller = new AbortController();
  private deadline: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  private stopped = false;
  private leasedUntil: Date;

  constructor(private readonly opts: HeldLeaseOptions) {
    const { leaseMs, renewEveryMs } = opts.settings;
    if (!(renewEveryMs > 0 && renewEveryMs * 2 <= leaseMs)) throw new Error("a lease must be renewed at least twice within its length");
    this.deadline = opts.claimedAt + leaseMs - renewEveryMs;
    this.leasedUntil = opts.leasedUntil;
    this.renewTimer = setInterval(() => void this.renewOnce(), renewEveryMs);
    this.armDeadline();
  }

  /** Aborts when the lease is lost; its reason is a LeaseLostError. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** May the attempt still act on the row: not lost, not stopped, and before its own deadline. */
  get held(): boolean {
    return !this.stopped && !this.controller.signal.aborted && performance.now() < this.deadline;
  }

  /** Stops renewing (the attempt is over: committed, failed or given up). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.renewTimer);
    clearTimeout(this.deadlineTimer);
  }

  /**
   * Waits for `work` while the lease is held: its result, or a LeaseLostError as
   * soon as the lease is lost. Lost, the work is left to settle on its own and
   * nothing it produces is used.
   */
  guard<T>(work: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(signal.reason);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        work.catch(() => undefined);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      work.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(err);
        },
      );
    });
  }

  /** Throws LeaseLostError unless the lease is held right now (before a commit). */
  assertHeld(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
    if (!this.held) {
      this.lose("lease not renewed in time");
      throw this.controller.signal.reason;
    }
  }

  private async renewOnce(): Promise<void> {
    if (this.renewing || !this.held) return;
    this.renewing = true;
    const sentAt = performance.now();
    const now = this.opts.now();
    const until = new Date(now.getTime() + this.opts.settings.leaseMs);
    try {
      const ok = await this.opts.renew({ held: this.leasedUntil, now, until });
      if (this.stopped || this.controller.signal.aborted) return;
      if (!ok) {
        this.lose("lease lost: the row is no longer this attempt's");
        return;
      }
      this.leasedUntil = until;
      this.deadline = Math.max(this.deadline, sentAt + this.opts.settings.leaseMs - this.opts.settings.renewEveryMs);
      this.armDeadline();
      this.opts.onRenewed?.();
    } catch (err) {
      this.opts.onRenewError?.(err);
    } finally {
      this.renewing = false;
    }
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    if (this.stopped) return;
    this.deadlineTimer = setTimeout(
      () => {
        if (performance.now() >= this.deadline) this.lose("lease not renewed in time");
        else this.armDeadline();
      },
      Math.max(0, Math.ceil(this.deadline - performance.now())),
    );
  }

  private lose(reason: string): void {
    if (this.controller.signal.aborted) return;
    clearInterval(this.renewTimer);
    clearTimeout(this.deadlineTimer);
    this.controller.abort(new LeaseLostError(reason));
    if (!this.stopped) this.opts.onLost?.(reason);
  }
}

/**
 * How long a failed attempt keeps its row before the retry or the reconciler may
 * take it over: 1 s after the first failure, doubling up to 5 minutes (BullMQ's own
 * back-off), so a row that keeps failing is not retried in a tight loop while one
 * that failed once is taken over at once.
 */
export function failureBackoffMs(attempt: number, maxMs = 300_000): number {
  return Math.min(maxMs, 1_000 * 2 ** Math.min(Math.max(attempt - 1, 0), 20));
}
