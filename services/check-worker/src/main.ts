import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService } from "@svc/core";
import { loadCheckWorkerConfig } from "./config";
import { completeDueTestLookup, sweepDueTestLookups } from "./test-lookups";

/** The check-worker: consumes the `checks` queue and runs checks against data sources. */
startService("check-worker", async () => {
  loadDotEnv();
  const config = loadCheckWorkerConfig();
  await runWorkerService({
    name: "check-worker",
    queue: QUEUES.checks,
    config,
    handlers: (ctx) => ({
      "lookup.complete-test": (payload) => completeDueTestLookup(ctx, payload.lookupId),
    }),
    periodic: [{ name: "sweep due test lookups", everyMs: config.SWEEP_INTERVAL_MS, run: sweepDueTestLookups }],
  });
});
