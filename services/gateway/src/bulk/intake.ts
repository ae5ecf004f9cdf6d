import path from "node:path";
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { ApiError } from "@svc/contract";
import { metrics } from "@svc/metrics";
import type { GatewayConfig } from "../config";
import { FairScheduler, Overloaded } from "./fair-scheduler";
import type { TestUsage } from "@svc/store";
import type { Intake, IntakeInput, RowMessage } from "./intake-task";
import type { IntakeTaskInput, IntakeWorkerData, ThreadPriority } from "./intake-worker";

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
  private readonly pool: Piscina<IntakeTaskInput | { probe: true }, Intake | null>;
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
   *
   * An accepted createJob resolves as soon as it is planned, with `rows` still being
   * rendered on the thread (streamed: the job's COPY writes them as they come, so the
   * COPY overlaps the rendering) and `usageLater`. The tenant's thread stays taken
   * until the last row is rendered, whatever the request's fate: a request refused
   * meanwhile only drops the rows.
   */
  async run(tenant: string, input: IntakeInput, signal?: AbortSignal): Promise<Intake> {
    const bytes = input.body.type === "json" ? input.body.bytes : input.body.form.file;
    const channel = input.operation === "createJob" && input.jobId ? new MessageChannel() : null;
    const rows = channel ? new StreamedRows() : null;
    return new Promise<Intake>((resolve, reject) => {
      channel?.port1.on("message", (message: RowMessage) => {
        if (message.type === "rows") rows?.push(message.text);
        else if (message.type === "head" && rows) resolve({ ...message.intake, rows: { count: message.rowCount, chunks: rows }, usage: null, usageLater: rows.usage });
        else if (message.type === "end") {
          rows?.end(message.usage);
          channel.port1.close();
        }
      });
      const task: IntakeTaskInput = channel ? { ...input, port: channel.port2 } : input;
      const transferList = channel ? [bytes.buffer as ArrayBuffer, channel.port2] : [bytes.buffer as ArrayBuffer];
      this.scheduler
        .run(tenant, bytes.byteLength, async () => (await this.pool.run(task, { transferList: transferList as never })) as Intake | null, signal)
        .then(
          // null: the intake went over the port (its `end` may still be on the way).
          (result) => {
            if (result === null) return;
            channel?.port1.close();
            resolve(result);
          },
          (err: unknown) => {
            channel?.port1.close();
            const failure = err instanceof Overloaded ? overloaded(err.retryAfterSeconds) : err;
            rows?.fail(failure);
            reject(failure);
          },
        );
    });
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

/**
 * A job's rows as an intake thread sends them: pieces queued until the COPY reads
 * them. Read once (a second reader would see only what is left, so it is refused);
 * a thread that fails makes the reader throw, which fails the COPY and so rolls back
 * the job's transaction.
 */
class StreamedRows implements AsyncIterable<Uint8Array> {
  readonly usage: Promise<TestUsage | null>;
  private settleUsage!: { resolve: (u: TestUsage | null) => void; reject: (err: unknown) => void };
  private readonly pieces: Uint8Array[] = [];
  private ended = false;
  private failure: { err: unknown } | null = null;
  private wake: (() => void) | null = null;
  private read = false;

  constructor() {
    this.usage = new Promise((resolve, reject) => (this.settleUsage = { resolve, reject }));
    // Nobody asks for the usage of a request refused after its intake.
    this.usage.catch(() => undefined);
  }

  push(text: Uint8Array): void {
    this.pieces.push(text);
    this.notify();
  }

  end(usage: TestUsage | null): void {
    this.ended = true;
    this.settleUsage.resolve(usage);
    this.notify();
  }

  fail(err: unknown): void {
    if (this.ended) return;
    this.failure = { err };
    this.settleUsage.reject(err);
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    if (this.read) throw new Error("streamed rows can be read once");
    this.read = true;
    for (;;) {
      const next = this.pieces.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.failure) throw this.failure.err;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
