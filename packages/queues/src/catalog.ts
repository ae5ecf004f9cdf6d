import { Type, type Static, type TObject } from "@sinclair/typebox";

/** Every queue of the fleet, and the service that consumes it. */
export const QUEUES = {
  /** check-worker: runs checks (lookups, job chunks) and completes pending test lookups. */
  checks: "checks",
  /** billing-ledger: settles reservations. */
  settlements: "settlements",
  /** webhook-dispatcher: plans and attempts webhook deliveries. */
  webhooks: "webhooks",
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

const Id = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9A-Za-z]{8,64}$` });

/**
 * The job catalog: each job name's queue, payload schema and retry policy.
 * Payloads carry ids only, never personal data or secrets; consumers rebuild
 * everything else from Postgres, so a lost or repeated message is harmless.
 */
export const JOBS = {
  "lookup.complete-test": {
    queue: QUEUES.checks,
    payload: Type.Object({ lookupId: Id("lkp") }, { additionalProperties: false }),
    attempts: 10,
  },
  "lookup.run": {
    queue: QUEUES.checks,
    payload: Type.Object({ lookupId: Id("lkp") }, { additionalProperties: false }),
    attempts: 10,
  },
  "settle.reservation": {
    queue: QUEUES.settlements,
    payload: Type.Object(
      {
        reservationId: Id("rsv"),
        /** Job chunks: settle only these rows (the closing settlement looks at all). */
        firstRow: Type.Optional(Type.Integer({ minimum: 1 })),
        lastRow: Type.Optional(Type.Integer({ minimum: 1 })),
      },
      { additionalProperties: false },
    ),
    attempts: 20,
  },
  "job.chunk": {
    queue: QUEUES.checks,
    payload: Type.Object({ jobId: Id("job"), chunkNo: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    attempts: 10,
  },
  /**
   * Finish and settle a cancelled job with nothing in flight (or settle a finished
   * job's open reservation): the gateway cancels, the check-worker finishes, since
   * the gateway's database role may not write the ledger.
   */
  "job.finish": {
    queue: QUEUES.checks,
    payload: Type.Object({ jobId: Id("job") }, { additionalProperties: false }),
    attempts: 10,
  },
  /** Plan an event's deliveries and make the first attempts (sent after the event's transaction commits). */
  "event.dispatch": {
    queue: QUEUES.webhooks,
    payload: Type.Object({ eventId: Id("evt") }, { additionalProperties: false }),
    attempts: 10,
  },
  /** One attempt of one delivery, when it is due (retries, released held events). */
  "delivery.attempt": {
    queue: QUEUES.webhooks,
    payload: Type.Object({ deliveryId: Type.String({ pattern: "^[1-9][0-9]{0,18}$" }) }, { additionalProperties: false }),
    attempts: 5,
  },
} as const satisfies Record<string, { queue: QueueName; payload: TObject; attempts: number }>;

export type JobName = keyof typeof JOBS;

/**
 * W3C trace context of the work that enqueued a message (the `traceparent` and
 * `tracestate` headers, https://www.w3.org/TR/trace-context/), carried beside the
 * payload in the message's data so its consumer continues the same trace. Present
 * only when the producer was tracing. It holds random trace and span ids and
 * tracing vendors' opaque state, never personal data; both producer and consumer
 * validate it like the payload.
 */
export const TraceContext = Type.Object(
  {
    traceparent: Type.String({ pattern: "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$" }),
    tracestate: Type.Optional(Type.String({ maxLength: 512, pattern: "^[\\x20-\\x7e]*$" })),
  },
  { additionalProperties: false },
);
export type TraceContext = Static<typeof TraceContext>;

/**
 * Beside its data, every message holds the fleet's tag over queue, name and data
 * (FleetKeys.signMessage) in this field; consumers verify it and take it off before
 * anything else looks at the data.
 */
export const MESSAGE_TAG_FIELD = "auth";

/** The data a message of job `name` holds: its payload, and its trace context when traced. */
export function messageSchema(name: JobName): TObject {
  return Type.Object({ ...JOBS[name].payload.properties, traceContext: Type.Optional(TraceContext) }, { additionalProperties: false });
}
export type JobMessage<N extends JobName> = JobPayload<N> & { traceContext?: TraceContext };
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]["payload"]>;
export type JobsOf<Q extends QueueName> = { [N in JobName]: (typeof JOBS)[N]["queue"] extends Q ? N : never }[JobName];
