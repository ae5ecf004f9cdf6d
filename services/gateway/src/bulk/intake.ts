import path from "node:path";
import type { Request } from "express";
import { Piscina } from "piscina";
import { ApiError } from "@svc/contract";
import { networkOf } from "@svc/domain";
import { metrics } from "@svc/telemetry";
import type { GatewayConfig } from "../config";
import type { Caller } from "../context";
import { FairScheduler, Overloaded } from "./fair-scheduler";
import type { Intake, IntakeInput } from "./intake-task";
import type { IntakeWorkerData, ThreadPriority } from "./intake-worker";

/**
 * The built thread entry: threads run plain JavaScript, also under the test runner
 * (from src/bulk or dist/bulk this names dist/bulk/intake-worker.js).
 */
const WORKER_FILE = path.resolve(__dirname, "..", "..", "dist", "bulk", "intake-worker.js");

export type BulkIntakeOptions = {
  /** Intake threads in this process. */
  threads: number;
  /** Bulk requests one tenant may have waiting for a thread (beyond those running). */
  queuePerTenant: number;
  /** Longest a bulk request waits for a thread before it is answered 503. */
  maxWaitMs: number;
  /** Added to the threads' niceness, so request handling, Postgres and Redis come first. */
  niceIncrement: number;
  /** Linux: run the threads under SCHED_IDLE (preempted by any other work on the host), niceness as the fallback. */
  schedIdle: boolean;
  /** Keys answer-cache lookups and e-mail family digests on the threads. */
  cacheSecret: string;
};

/**
 * Whose share a bulk request uses: its account, or for the public sandbox key
 * (shared by everyone) the caller's network, as its rate limit counts it.
 */
export function intakeTenant(req: Request, caller: Caller): string {
  return caller.isSandbox ? `sandbox:${networkOf(req.ip ?? "")}` : `account:${caller.accountId}`;
}

const overloaded = (retryAfterSeconds: number) => {
  metrics.intakeRefused().inc();
  return new ApiError("temporarily_unavailable", {
    message: "Too many large requests from this account are waiting to be read. Nothing was charged.",
    suggestion: "Retry after the time in Retry-After, or send fewer large requests at once.",
    retryAfterSeconds,
  });
};

/**
 * Reads, validates and plans bulk requests (50,000 identifiers, 4 MB bodies) on
 * worker threads instead of the event loop that answers everyone's requests, with
 * each tenant's share of the threads kept fair (FairScheduler). piscina runs the
 * threads (start-up, crash replacement, niceness, transferred buffers); the
 * scheduler decides whose request goes next and never hands piscina more tasks than
 * there are threads, so its own FIFO queue stays empty.
 */
export class BulkIntake {
  private readonly pool: Piscina<IntakeInput | { probe: true }, Intake>;
  private readonly scheduler: FairScheduler;

  constructor(opts: BulkIntakeOptions) {
    this.pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      niceIncrement: opts.niceIncrement,
      workerData: { cacheSecret: opts.cacheSecret, schedIdle: opts.schedIdle } satisfies IntakeWorkerData,
    });
    this.scheduler = new FairScheduler({ slots: opts.threads, queuePerTenant: opts.queuePerTenant, maxWaitMs: opts.maxWaitMs });
  }

  static fromConfig(config: GatewayConfig): BulkIntake {
    return new BulkIntake({
      threads: config.INTAKE_THREADS,
      queuePerTenant: config.INTAKE_QUEUE_PER_ACCOUNT,
      maxWaitMs: config.INTAKE_MAX_WAIT_MS,
      niceIncrement: config.INTAKE_THREAD_NICE,
      schedIdle: config.INTAKE_THREAD_SCHED_IDLE,
      cacheSecret: config.CACHE_HASH_SECRET,
    });
  }

  /** 503 at once when the tenant's share is full: its body need not even be read. */
  assertRoom(tenant: string): void {
    if (!this.scheduler.hasRoom(tenant)) throw overloaded(this.scheduler.retryAfterSeconds(tenant));
  }

  /**
   * Runs the intake of one request when its tenant's turn comes. The body's bytes are
   * transferred to the thread (the caller must not use them afterwards). `signal`
   * withdraws a request still waiting (its client went away); one already running
   * finishes, as stopping a thread would cost more than the rest of the task.
   */
  async run(tenant: string, input: IntakeInput, signal?: AbortSignal): Promise<Intake> {
    const bytes = input.body.type === "json" ? input.body.bytes : input.body.form.file;
    try {
      return await this.scheduler.run(tenant, bytes.byteLength, async () => (await this.pool.run(input, { transferList: [bytes.buffer as ArrayBuffer] })) as Intake, signal);
    } catch (err) {
      if (err instanceof Overloaded) throw overloaded(err.retryAfterSeconds);
      throw err;
    }
  }

  /** How the threads are scheduled (asks one of them): "idle" (SCHED_IDLE) or "nice". */
  async priority(): Promise<ThreadPriority> {
    return (await this.pool.run({ probe: true })) as unknown as ThreadPriority;
  }

  get stats(): { running: number; queued: number; tenants: number } {
    return this.scheduler.stats;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
