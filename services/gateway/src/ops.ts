import { loadDotEnv } from "@svc/config";
import { clusterSource, metrics, onScrape, startOpsServer } from "@svc/metrics";
import type { BulkIntake } from "./bulk";
import { loadGatewayConfig } from "./config";

/**
 * The gateway's own gauges and counters at 0: intake threads' tasks read when
 * scraped; reservations by key mode and outcome, so the first of each shows as an
 * increase. (Request metrics are recorded by the request-context middleware.)
 */
export function gatewayMetrics(bulk: BulkIntake): void {
  for (const mode of ["live", "agent"]) {
    for (const outcome of ["reserved", "refused"]) metrics.reservations().inc({ mode, outcome }, 0);
    metrics.reservedMicros().inc({ mode }, 0);
  }
  metrics.intakeRefused();
  onScrape("bulk intake", () => {
    const { running, queued } = bulk.stats;
    metrics.intakeTasks().set({ state: "running" }, running);
    metrics.intakeTasks().set({ state: "queued" }, queued);
  });
}

/**
 * The cluster primary (WEB_CONCURRENCY > 1) is the one process listening on
 * METRICS_PORT: it answers with its gateway processes' metrics aggregated and their
 * readiness combined, and reports not-ready from the moment it passes SIGTERM on.
 */
export async function startPrimaryOps(draining: () => boolean): Promise<void> {
  loadDotEnv();
  const config = loadGatewayConfig();
  if (config.METRICS_PORT === 0) return;
  await startOpsServer({ port: config.METRICS_PORT, host: config.METRICS_HOST, source: clusterSource(), draining });
}
