import { UnrecoverableError, Worker, type Job } from "bullmq";
import Ajv from "ajv";
import { metrics } from "@svc/metrics";
import { MESSAGE_TAG_FIELD, messageSchema, type JobName, type JobPayload, type JobsOf, type QueueName } from "./catalog";
import { traceHandlers } from "./tracing";
import type { RedisClient } from "./connection";
import { queuePrefix } from "./keys";
import type { Fleet } from "./fleet";

const ajv = new Ajv({ allErrors: false, strict: false });

export type Handlers<Q extends QueueName> = { [N in JobsOf<Q>]: (payload: JobPayload<N>, job: Job) => Promise<void> };

/**
 * A BullMQ worker for one queue that acts only on messages the fleet wrote (their
 * tag verifies under the fleet's key: ./fleet-keys), validates every payload against
 * the job catalog again (trace context included) before calling the handler, inside
 * the message's trace when tracing is on. Handlers must be idempotent: BullMQ
 * delivers at least once (a worker killed mid-job has its job re-run after the
 * lock expires).
 */
export function createConsumer<Q extends QueueName>(
  queue: Q,
  handlers: Handlers<Q>,
  options: { connection: RedisClient; fleet: Fleet; concurrency: number; onError: (err: Error) => void; lockDurationMs?: number },
): Worker {
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  for (const name of Object.keys(handlers)) validators.set(name, ajv.compile(messageSchema(name as JobName)));
  // Each handler gets the payload alone and runs in the message's trace (./tracing).
  handlers = traceHandlers(queue, handlers);
  const worker = new Worker(
    queue,
    async (job: Job) => {
      const validate = validators.get(job.name);
      const handler = (handlers as Record<string, (p: unknown, j: Job) => Promise<void>>)[job.name];
      // Unknown names are counted under one word: a label never takes a value from outside the catalog.
      const labels = { queue, name: handler ? job.name : "(unknown)" };
      const started = process.hrtime.bigint();
      let outcome = "error";
      try {
        // A message the fleet did not write is refused unread, and never retried: the
        // work it names, if any, is rebuilt from Postgres by the sweeps.
        const { [MESSAGE_TAG_FIELD]: tag, ...data } = (job.data ?? {}) as Record<string, unknown>;
        if (!handler || !options.fleet.keys.verifyMessage(queue, job.name, data, tag)) {
          outcome = "refused";
          throw new UnrecoverableError(`message refused: no valid tag of this fleet's key on job ${handler ? job.name : "(unknown)"}`);
        }
        // A payload that fails its schema is a programming error: fail it once, never retry.
        if (!validate || !validate(data)) throw new UnrecoverableError(`invalid payload for job ${job.name}`);
        await handler(data, job);
        outcome = "ok";
      } finally {
        metrics.jobDuration().observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
        metrics.jobsProcessed().inc({ ...labels, outcome });
      }
    },
    {
      connection: options.connection,
      prefix: queuePrefix(options.fleet.prefix, queue),
      concurrency: options.concurrency,
      autorun: false,
      lockDuration: options.lockDurationMs ?? 30_000,
      // Look for jobs of dead workers as often as their locks can expire.
      stalledInterval: Math.min(30_000, options.lockDurationMs ?? 30_000),
      maxStalledCount: 10,
    },
  );
  worker.on("error", options.onError);
  // Every job name of the queue starts at 0, so the first message shows as an increase.
  for (const name of Object.keys(handlers)) for (const outcome of ["ok", "error", "refused"]) metrics.jobsProcessed().inc({ queue, name, outcome }, 0);
  return worker;
}
