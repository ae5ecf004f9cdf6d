import type { JobName, JobPayload } from "./catalog";

/**
 * What names one message of each job: its payload's ids, plus what tells apart the
 * messages one payload may need (a chunk's settlement, a delivery's attempt).
 */
export type JobIdKey = {
  "lookup.complete-test": Pick<JobPayload<"lookup.complete-test">, "lookupId">;
  "lookup.run": Pick<JobPayload<"lookup.run">, "lookupId">;
  /** A lookup's settlement: the reservation alone; a job chunk's: with its chunk number. */
  "settle.reservation": Pick<JobPayload<"settle.reservation">, "reservationId"> & { chunkNo?: number };
  "job.chunk": Pick<JobPayload<"job.chunk">, "jobId" | "chunkNo">;
  "job.finish": Pick<JobPayload<"job.finish">, "jobId">;
  "event.dispatch": Pick<JobPayload<"event.dispatch">, "eventId">;
  /** A retry: the attempt it will be; a held delivery released when its endpoint was verified: when (an endpoint can be verified again within the hour). */
  "delivery.attempt": Pick<JobPayload<"delivery.attempt">, "deliveryId"> & ({ attemptNo: number } | { releasedAt: Date });
};

/**
 * The job id rule of every job in the catalog: the one place a message's BullMQ id
 * is built. An id names the work, so a second enqueue of the same work is dropped
 * by BullMQ; the check-worker's reconciler looks up the producer's message by this
 * same id, so the two must never drift apart. BullMQ refuses ids with `:` and ids
 * that read as integers: every id starts with a word and joins with `-`.
 */
export const JOB_IDS: { readonly [N in JobName]: (key: JobIdKey[N]) => string } = {
  "lookup.complete-test": ({ lookupId }) => `complete-test-${lookupId}`,
  "lookup.run": ({ lookupId }) => `run-${lookupId}`,
  "settle.reservation": ({ reservationId, chunkNo }) => (chunkNo === undefined ? `settle-${reservationId}` : `settle-${reservationId}-${chunkNo}`),
  "job.chunk": ({ jobId, chunkNo }) => `chunk-${jobId}-${chunkNo}`,
  "job.finish": ({ jobId }) => `finish-${jobId}`,
  "event.dispatch": ({ eventId }) => `event-${eventId}`,
  "delivery.attempt": (key) => ("attemptNo" in key ? `attempt-${key.deliveryId}-${key.attemptNo}` : `release-${key.deliveryId}-${key.releasedAt.getTime()}`),
};

/** The id of the message that carries `key`'s work of job `name` (see JOB_IDS). */
export function jobIdOf<N extends JobName>(name: N, key: JobIdKey[N]): string {
  return JOB_IDS[name](key);
}

/**
 * The reconciler's message for a work item's next claim, after `claims` claims so
 * far: its own id, so neither the producer's message (still held by a dead worker,
 * or finished) nor an earlier takeover's can stand in its way.
 */
export function takeoverJobId<N extends JobName>(name: N, key: JobIdKey[N], claims: number): string {
  return `${jobIdOf(name, key)}-a${claims}`;
}

/**
 * A sibling of message `jobId`, taken by a worker at `takenAt` (ms) that died before
 * claiming its work: a new id, since BullMQ drops a message under an id it still holds.
 */
export function siblingJobId(jobId: string, takenAt: number): string {
  return `${jobId}-r${takenAt}`;
}
