// First: tracing hooks modules as they load (./tracing).
import "./tracing";
import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService } from "@svc/service-runner";
import { loadServiceConfig } from "./config";
import { ledgerMetrics, reconcileLedger, settle, sweepReservations } from "./settle";

/** The billing-ledger: consumes the `settlements` queue and settles money. */
startService("billing-ledger", async () => {
  loadDotEnv();
  const config = loadServiceConfig();
  await runWorkerService({
    name: "billing-ledger",
    queue: QUEUES.settlements,
    config,
    handlers: (ctx) => ({
      "settle.reservation": (payload) =>
        settle(ctx, payload.reservationId, payload.firstRow && payload.lastRow ? { first: payload.firstRow, last: payload.lastRow } : undefined),
    }),
    periodic: [
      { name: "sweep reservations", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => sweepReservations(ctx, config.SWEEP_GRACE_MS) },
      ...(config.LEDGER_RECONCILE_INTERVAL_MS > 0 ? [{ name: "reconcile ledger", everyMs: config.LEDGER_RECONCILE_INTERVAL_MS, run: reconcileLedger }] : []),
    ],
    metrics: ledgerMetrics,
  });
});
