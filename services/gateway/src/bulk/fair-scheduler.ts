/**
 * Shares a fixed number of slots (intake threads) between tenants (accounts; the
 * public sandbox key per caller network) by start-time fair queuing: each task
 * gets a start tag `max(virtual time, the tenant's last finish tag)` and finish tag
 * `start + cost`; the queued task with the smallest start tag runs next. A tenant
 * that floods only pushes its own tags further into the future, so anyone else's
 * task is next in line for the first slot that frees up. Work-conserving: a lone
 * tenant may use every slot. (A new task of a running tenant is tagged from the
 * tenant's state, so the state must outlive the tenant's last queued task while it
 * still runs; see `forget`.)
 *
 * Each tenant may keep at most `queuePerTenant` tasks waiting and none waits longer
 * than `maxWaitMs`; beyond that the scheduler refuses (`Overloaded`) so the caller
 * can answer 503 with Retry-After instead of holding requests it cannot serve soon.
 */
export class Overloaded extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super("overloaded");
    this.name = "Overloaded";
  }
}

export type FairSchedulerOptions = {
  slots: number;
  queuePerTenant: number;
  maxWaitMs: number;
};

type Waiting = {
  tenant: Tenant;
  start: number;
  run: () => void;
  refuse: (err: Error) => void;
};

type Tenant = { name: string; finish: number; queue: Waiting[]; running: number };

export class FairScheduler {
  private readonly tenants = new Map<string, Tenant>();
  private virtualTime = 0;
  private running = 0;
  private queued = 0;
  /** Moving average of how long a task holds a slot, for Retry-After. */
  private averageMs = 1_000;

  constructor(private readonly opts: FairSchedulerOptions) {
    if (opts.slots < 1) throw new Error("FairScheduler needs at least one slot");
  }

  /** False when the tenant's queue is full: refuse before reading a body that would only wait. */
  hasRoom(tenant: string): boolean {
    return this.running < this.opts.slots || (this.tenants.get(tenant)?.queue.length ?? 0) < this.opts.queuePerTenant;
  }

  /** Seconds a refused tenant should wait before trying again. */
  retryAfterSeconds(tenant: string): number {
    const ahead = (this.tenants.get(tenant)?.queue.length ?? 0) + 1;
    return Math.min(30, Math.max(1, Math.ceil((this.averageMs * ahead) / this.opts.slots / 1000)));
  }

  get stats(): { running: number; queued: number; tenants: number } {
    return { running: this.running, queued: this.queued, tenants: this.tenants.size };
  }

  /**
   * Runs `work` when the tenant's turn comes. `cost` is the task's expected size
   * (body bytes). Rejects with `Overloaded` when the tenant's queue is full or the
   * wait runs past `maxWaitMs`, and with the signal's reason if it aborts first.
   */
  run<T>(tenantName: string, cost: number, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const tenant = this.tenant(tenantName);
    if (this.running >= this.opts.slots && tenant.queue.length >= this.opts.queuePerTenant) {
      this.forget(tenant);
      return Promise.reject(new Overloaded(this.retryAfterSeconds(tenantName)));
    }
    const start = Math.max(this.virtualTime, tenant.finish);
    tenant.finish = start + Math.max(1, cost);
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const entry: Waiting = {
        tenant,
        start,
        run: () => {
          cleanup();
          const began = performance.now();
          work().then(resolve, reject).finally(() => {
            this.averageMs = 0.8 * this.averageMs + 0.2 * (performance.now() - began);
            this.running -= 1;
            tenant.running -= 1;
            this.forget(tenant);
            this.pump();
          });
        },
        refuse: (err) => {
          cleanup();
          reject(err);
        },
      };
      const onAbort = () => this.withdraw(entry, signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      tenant.queue.push(entry);
      this.queued += 1;
      this.pump();
      if (tenant.queue.includes(entry)) {
        timer = setTimeout(() => this.withdraw(entry, new Overloaded(this.retryAfterSeconds(tenant.name))), this.opts.maxWaitMs);
        timer.unref();
      }
    });
  }

  private tenant(name: string): Tenant {
    let t = this.tenants.get(name);
    if (!t) this.tenants.set(name, (t = { name, finish: 0, queue: [], running: 0 }));
    return t;
  }

  /**
   * A tenant with nothing queued or running keeps no state: its next task starts at
   * the current virtual time like anyone's (memory stays bounded by busy tenants).
   */
  private forget(t: Tenant): void {
    if (t.queue.length === 0 && t.running === 0) this.tenants.delete(t.name);
  }

  private withdraw(entry: Waiting, reason: unknown): void {
    const queue = entry.tenant.queue;
    const at = queue.indexOf(entry);
    if (at < 0) return;
    queue.splice(at, 1);
    this.queued -= 1;
    this.forget(entry.tenant);
    entry.refuse(reason instanceof Error ? reason : new Error(String(reason)));
  }

  private pump(): void {
    while (this.running < this.opts.slots && this.queued > 0) {
      let next: Waiting | undefined;
      for (const t of this.tenants.values()) {
        const head = t.queue[0];
        if (head && (!next || head.start < next.start)) next = head;
      }
      if (!next) return;
      next.tenant.queue.shift();
      this.queued -= 1;
      this.running += 1;
      next.tenant.running += 1;
      this.virtualTime = Math.max(this.virtualTime, next.start);
      next.run();
    }
  }
}
