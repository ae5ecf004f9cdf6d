import { Queue, type JobsOptions } from "bullmq";
import Ajv, { type ValidateFunction } from "ajv";
import { JOBS, MESSAGE_TAG_FIELD, messageSchema, QUEUES, type JobName, type JobPayload, type QueueName } from "./catalog";
import { stampTrace, tracedSend } from "./tracing";
import type { RedisClient } from "./connection";
import { queuePrefix } from "./keys";
import type { Fleet } from "./fleet";

/** The gateway's (and any service's) handle for enqueuing: one BullMQ Queue per queue name. */
const ajv = new Ajv({ allErrors: false, strict: false });
const validators = new Map<JobName, ValidateFunction>();

/** Validates a message (payload and trace context) against the catalog before it leaves the process (consumers check again). */
function assertPayload(name: JobName, data: unknown): void {
  let validate = validators.get(name);
  if (!validate) validators.set(name, (validate = ajv.compile(messageSchema(name))));
  if (!validate(data)) throw new Error(`invalid payload for job ${name}`);
}

/**
 * `jobId` names the work (duplicates are dropped); `first` puts the message at the
 * front of its queue, for short work someone is waiting on behind a backlog.
 */
export type EnqueueOptions = { jobId: string; delayMs?: number; priority?: number; first?: boolean };

export class Producer {
  private readonly queues = new Map<QueueName, Queue>();

  constructor(
    connection: RedisClient,
    private readonly fleet: Fleet,
    onError: (err: Error) => void = () => undefined,
  ) {
    for (const name of Object.values(QUEUES)) {
      const queue = new Queue(name, { connection, prefix: queuePrefix(fleet.prefix, name) });
      queue.on("error", onError);
      this.queues.set(name, queue);
    }
  }

  /**
   * Enqueues a job. `jobId` should be derived from the work (e.g. the lookup id) so
   * a duplicate enqueue is dropped by BullMQ instead of doing the work twice.
   * BullMQ forbids `:` in custom ids; use `-`.
   */
  async enqueue<N extends JobName>(name: N, payload: JobPayload<N>, options: EnqueueOptions): Promise<void> {
    const def = JOBS[name];
    await tracedSend(def.queue, name, null, () => this.add(name, payload, options));
  }

  private async add<N extends JobName>(name: N, payload: JobPayload<N>, options: EnqueueOptions): Promise<void> {
    const data = this.signed(name, stampTrace(payload));
    if (options.jobId.includes(":")) throw new Error("job ids must not contain ':'");
    const def = JOBS[name];
    const queue = this.queues.get(def.queue) as Queue;
    const opts: JobsOptions = {
      jobId: options.jobId,
      attempts: def.attempts,
      backoff: { type: "exponential", delay: 1_000 },
      removeOnComplete: { age: 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    };
    if (options.delayMs) opts.delay = options.delayMs;
    if (options.priority) opts.priority = options.priority;
    if (options.first) opts.lifo = true;
    await queue.add(name, data, opts);
  }

  /** Enqueues many jobs of one name in one round trip (e.g. a bulk job's chunks). */
  async enqueueMany<N extends JobName>(name: N, jobs: Array<{ payload: JobPayload<N>; jobId: string }>): Promise<void> {
    if (jobs.length === 0) return;
    const def = JOBS[name];
    await tracedSend(def.queue, name, jobs.length, () => this.addMany(name, jobs));
  }

  private async addMany<N extends JobName>(name: N, jobs: Array<{ payload: JobPayload<N>; jobId: string }>): Promise<void> {
    const def = JOBS[name];
    const messages = jobs.map((j) => ({ jobId: j.jobId, data: this.signed(name, stampTrace(j.payload)) }));
    for (const j of messages) if (j.jobId.includes(":")) throw new Error("job ids must not contain ':'");
    const queue = this.queues.get(def.queue) as Queue;
    await queue.addBulk(
      messages.map((j) => ({
        name,
        data: j.data,
        opts: { jobId: j.jobId, attempts: def.attempts, backoff: { type: "exponential", delay: 1_000 }, removeOnComplete: { age: 3600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3600 } },
      })),
    );
  }

  /** The message's data checked against the catalog, with the fleet's tag over it: consumers act on nothing else. */
  private signed<N extends JobName>(name: N, data: object): object {
    assertPayload(name, data);
    return { ...data, [MESSAGE_TAG_FIELD]: this.fleet.keys.signMessage(JOBS[name].queue, name, data) };
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name) as Queue;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
  }
}
