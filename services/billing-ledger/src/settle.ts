import { notifyDispatcher, type WorkerContext } from "@svc/core";
import { KeyedSemaphore, reservationsToSweep, settleReservation, unsettledChunks, withTransaction } from "@svc/store";

/**
 * Settlements this process runs at once against one account row; more wait in
 * memory (a long queue of Postgres row-lock waiters thrashes, see BENCHMARKS.md).
 */
const accountTurns = new KeyedSemaphore(3);

/**
 * Settles one reservation (see settleReservation): safe to receive twice, and a
 * process killed mid-way leaves a rolled-back transaction and a job BullMQ re-runs.
 */
export async function settle(ctx: WorkerContext, reservationId: string, range?: { first: number; last: number }): Promise<void> {
  const { rows } = await ctx.store.pool.query<{ account_id: string }>(`SELECT account_id FROM reservations WHERE id = $1`, [reservationId]);
  const accountId = rows[0]?.account_id;
  if (!accountId) return;
  const result = await accountTurns.run(accountId, () => withTransaction(ctx.store.pool, (client) => settleReservation(client, reservationId, ctx.now(), range ? { rows: range } : {})));
  await notifyDispatcher(ctx, result.eventIds);
  if (result.settledPairs > 0 || result.closed) {
    ctx.logger.info(
      { reservationId, pairs: result.settledPairs, charged: result.chargedMicros.toString(), released: result.releasedMicros.toString(), closed: result.closed },
      "reservation settled",
    );
  }
}

/**
 * From Postgres alone, whatever happened to the messages: closes reservations
 * whose work finished or was abandoned, and settles the finished chunks of running
 * jobs whose own settlement never came (`graceMs` after the chunk finished).
 */
export async function sweepReservations(ctx: WorkerContext, graceMs: number, pageSize = 200): Promise<void> {
  // Closed reservations drop out of the next page: a pass goes on while pages are full.
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const ids = await reservationsToSweep(ctx.store.pool, ctx.now(), pageSize);
    for (const id of ids) await settle(ctx, id);
    if (ids.length < pageSize) break;
  }
  for (const chunk of await unsettledChunks(ctx.store.pool, new Date(ctx.now().getTime() - graceMs), pageSize)) {
    await settle(ctx, chunk.reservation_id, { first: chunk.first_row, last: chunk.last_row });
  }
}

/** Pages of reservations one sweep settles at most (a pass is cut short, never stuck, in a flood). */
const MAX_PAGES = 50;
