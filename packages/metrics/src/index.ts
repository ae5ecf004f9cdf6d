export { registry, startProcessMetrics, onScrape, exposition, snapshot } from "./registry";
export { metrics, sourceOutcome } from "./metrics";
export { readinessOf, READINESS_CHECK_TIMEOUT_MS, type Readiness, type ReadinessCheck } from "./readiness";
export { startOpsServer, localSource, type OpsServer, type OpsSource } from "./ops-server";
export { answerPrimary, clusterSource } from "./cluster";
