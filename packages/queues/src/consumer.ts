import { UnrecoverableError, Worker, type Job } from "bullmq";
import Ajv from "ajv";
import { metrics } from "@svc/telemetry";
import { messageSchema, type JobName, type JobPayload, type JobsOf, type QueueName } from "./catalog";
import { traceHandlers } from "./tracing";
import type { RedisClient } from "./connection";
import { queuePrefix } from "./keys";

const ajv = new Ajv({ allErrors: false, strict: false });

export type Handlers<Q extends QueueName> = { [N in JobsOf<Q>]: (payload: JobPayload<N>, job: Job) => Promise<void> };

/**
 * A BullMQ worker for one queue that validates every payload against the job
 * catalog again (trace context included) before calling the handler, inside the
 * message's trace when tracing is on. Handlers must be idempotent: BullMQ
 * delivers at least once (a worker killed mid-job has its job re-run after the
 * lock expires).
 */
export function createConsumer<Q extends QueueName>(
  queue: Q,
  handlers: Handlers<Q>,
  options: { connection: RedisClient; prefix: string; concurrency: number; onError: (err: Error) => void; lockDurationMs?: number },
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
        // A payload that fails its schema is a programming error: fail it once, never retry.
        if (!validate || !handler || !validate(job.data)) throw new UnrecoverableError(`invalid payload for job ${job.name}`);
        await handler(job.data, job);
        outcome = "ok";
      } finally {
        metrics.jobDuration().observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
        metrics.jobsProcessed().inc({ ...labels, outcome });
      }
    },
    {
      connection: options.connection,
      prefix: queuePrefix(options.prefix, queue),
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
  for (const name of Object.keys(handlers)) for (const outcome of ["ok", "error"]) metrics.jobsProcessed().inc({ queue, name, outcome }, 0);
  return worker;
}
