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
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]["payload"]>;
export type JobsOf<Q extends QueueName> = { [N in JobName]: (typeof JOBS)[N]["queue"] extends Q ? N : never }[JobName];
