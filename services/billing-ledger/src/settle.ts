import { countSettlements, notifyDispatcher } from "@svc/flows";
import type { WorkerContext } from "@svc/service-runner";
import { KeyedSemaphore, oldestDueSettlementSeconds, reconcileAllAccounts, reservationAccountId, reservationsToSweep, settleReservation, unsettledChunks, withTransaction } from "@svc/store";
import { metrics, onScrape } from "@svc/metrics";

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
  const accountId = await reservationAccountId(ctx.store.pool, reservationId);
  if (!accountId) return;
  let result: Awaited<ReturnType<typeof settleReservation>>;
  try {
    result = await accountTurns.run(accountId, () => withTransaction(ctx.store.pool, (client) => settleReservation(client, reservationId, ctx.now(), range ? { rows: range } : {})));
  } catch (err) {
    metrics.settlements().inc({ outcome: "error" });
    throw err;
  }
  countSettlements([result]);
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
 * jobs whose own settlement never came (`graceMs` after the chunk finished). A job
 * is settled in the transaction that finishes it (settleFinishedJob), so its
 * reservation is already closed here unless it expired or the job finished before
 * that was so; lookups are settled here or by their message.
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

/**
 * The ledger's gauges. Lag (the oldest due settlement) is read when scraped, reused
 * for 10 s; the series disappears while Postgres cannot be read. Counters start at
 * 0 so the first settlement shows as an increase.
 */
export function ledgerMetrics(ctx: WorkerContext): void {
  for (const outcome of ["closed", "partial", "nothing", "error"]) metrics.settlements().inc({ outcome }, 0);
  for (const kind of ["charged", "released"]) metrics.settledMicros().inc({ kind }, 0);
  const lag = metrics.ledgerOldestUnsettled();
  onScrape(
    "ledger lag",
    async () => {
      try {
        lag.set(await oldestDueSettlementSeconds(ctx.store.pool, ctx.now()));
      } catch {
        lag.reset();
      }
    },
    { cacheMs: 10_000 },
  );
}

/** The reconciliation over every account, for the imbalance gauges (a periodic task: it reads the whole ledger). */
export async function reconcileLedger(ctx: WorkerContext): Promise<void> {
  const r = await reconcileAllAccounts(ctx.store.pool);
  metrics.ledgerImbalance().set(Number(r.imbalanceMicros));
  metrics.ledgerUnbalancedAccounts().set(r.unbalancedAccounts);
  metrics.ledgerReconciledAt().set(Date.now() / 1000);
  if (r.unbalancedAccounts > 0) ctx.logger.error({ accounts: r.unbalancedAccounts, imbalanceMicros: r.imbalanceMicros.toString() }, "ledger reconciliation found unbalanced accounts");
}
