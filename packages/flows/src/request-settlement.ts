import { jobIdOf, type Producer } from "@svc/queues";

/**
 * Asking for money to be settled: the one module that sends settlement requests,
 * under the job id rule of packages/queues (JOB_IDS), so a repeated request
 * collapses into one message and settling is the same whichever site asks.
 *
 * Who asks, and why:
 * - the gateway (`lookups/live-lookup.ts`): a live lookup answered wholly when it
 *   was created (nothing left to run) is complete at once; its reservation is
 *   settled now instead of when the billing-ledger's sweep finds it;
 * - the check-worker (`live-lookups.ts`): after the commit that completed a live
 *   lookup;
 * - the check-worker (`job-chunks.ts`): after the commit of a chunk that did not
 *   finish its job, for that chunk's rows only, so a running job's `charged`
 *   grows as it goes;
 * - the gateway (`jobs/read-job.ts`, requestJobFinish): a cancel with nothing in
 *   flight, or a DELETE of a finished job whose reservation is still open. The
 *   gateway's database role may not write the ledger, so it asks the check-worker
 *   to finish the job, which settles it in that same transaction.
 *
 * Not requested, but settled where it happens: a job's final cost, in the
 * transaction that finishes it (the store's settleFinishedJob, the only way a
 * finishing transaction settles: docs/architecture.md, "A job's final status and
 * its final cost"). A request is sent only after the commit that made its answers
 * final. Losing one costs time, not money: the billing-ledger's sweep settles from
 * Postgres whatever no message asked for, and settlement is per (row, check), so a
 * duplicate bills nothing twice.
 */
export type SettlementRequest =
  /** A lookup's reservation, whole (its lookup is complete). */
  | { reservationId: string }
  /** The rows of one finished chunk of a running job. */
  | { reservationId: string; chunk: { chunkNo: number; firstRow: number; lastRow: number } };

/** Asks the billing-ledger to settle (see above for who calls it). */
export function requestSettlement(producer: Pick<Producer, "enqueue">, request: SettlementRequest): Promise<void> {
  const { reservationId } = request;
  if (!("chunk" in request)) return producer.enqueue("settle.reservation", { reservationId }, { jobId: jobIdOf("settle.reservation", { reservationId }) });
  const { chunkNo, firstRow, lastRow } = request.chunk;
  return producer.enqueue("settle.reservation", { reservationId, firstRow, lastRow }, { jobId: jobIdOf("settle.reservation", { reservationId, chunkNo }) });
}

/**
 * Asks the check-worker to finish a cancelled job with nothing in flight, or to
 * settle a finished job's open reservation, in one transaction (`job.finish`).
 * Sent to the front of the queue: a request is waiting on it.
 */
export function requestJobFinish(producer: Pick<Producer, "enqueue">, jobId: string): Promise<void> {
  return producer.enqueue("job.finish", { jobId }, { jobId: jobIdOf("job.finish", { jobId }), first: true });
}
