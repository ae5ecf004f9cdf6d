import Ajv from "ajv";
import type { Job } from "bullmq";
import { currentTraceCarrier, tracingEnabled, withSpan } from "@svc/process";
import { TraceContext, type JobName, type QueueName } from "./catalog";

/**
 * Trace context across the queues: a producer stamps each message with the W3C trace
 * context of a PRODUCER span (`send <queue>`), and the consumer runs the handler in a
 * CONSUMER span (`process <queue>`) whose parent is that context, so a lookup's
 * request, its check-worker run, its settlement and its webhook delivery are one
 * trace. With tracing off nothing is stamped and no span is made; a stamped message
 * is still consumed the same way.
 */
const validCarrier = new Ajv({ allErrors: false, strict: false }).compile(TraceContext);

const attributes = (queue: QueueName, name: string, operation: "send" | "process") => ({
  "messaging.system": "bullmq",
  "messaging.destination.name": queue,
  "messaging.operation.type": operation,
  "svc.job.name": name,
});

/** The message data for `payload`: the payload itself, plus the active trace context when there is one. */
export function stampTrace<P extends object>(payload: P): P & { traceContext?: TraceContext } {
  // The field is the queue's, never a payload's: a payload that has one is refused, not overwritten.
  if (Object.hasOwn(payload, "traceContext")) return payload;
  const carrier = currentTraceCarrier();
  // Tracing must never fail an enqueue: a context that does not fit the schema is left out.
  return carrier && validCarrier(carrier) ? { ...payload, traceContext: carrier } : payload;
}

/** Runs `send` inside the producer span of one message or one batch (`count`). */
export function tracedSend<T>(queue: QueueName, name: JobName, count: number | null, send: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return send();
  const attrs = count === null ? attributes(queue, name, "send") : { ...attributes(queue, name, "send"), "messaging.batch.message_count": count };
  return withSpan(`send ${queue}`, { kind: "producer", attributes: attrs }, send);
}

type Handler = (payload: never, job: Job) => Promise<void>;

/**
 * Wraps each handler so it receives the payload alone (the trace context taken off)
 * and runs in a consumer span continuing the producer's trace. The message was
 * validated first, trace context included (catalog `messageSchema`).
 */
export function traceHandlers<H extends Record<string, Handler>>(queue: QueueName, handlers: H): H {
  const wrapped: Record<string, Handler> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    const run = handler as (payload: unknown, job: Job) => Promise<void>;
    wrapped[name] = ((data: Record<string, unknown>, job: Job) => {
      const { traceContext, ...payload } = data as { traceContext?: TraceContext };
      if (!tracingEnabled()) return run(payload, job);
      return withSpan(
        `process ${queue}`,
        { kind: "consumer", parent: traceContext, attributes: { ...attributes(queue, name, "process"), "svc.job.attempt": job.attemptsMade + 1 } },
        () => run(payload, job),
      );
    }) as Handler;
  }
  return wrapped as H;
}
