import { Counter, Gauge, Histogram } from "prom-client";
import { registry } from "./registry";

/**
 * Every metric of the fleet, in one place (docs/operations.md says what each means).
 * Names and labels are a contract with the chart's alerts, KEDA triggers and the
 * Grafana dashboard: change them only together. Conventions: base units
 * (`_seconds`, `_micros` of USD), `_total` for counters, and bounded labels only —
 * route templates, queue and job names, check codes, route names from
 * configuration, fixed outcome words. Never an id, an account, a key, a number, an
 * address or a raw path.
 *
 * Each metric is created and registered the first time a process uses it, so a
 * service exports only the metrics it has a use for (the gateway has no
 * settlement counter showing a meaningless 0).
 */
function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

const registers = [registry];

/** Request latencies: a lookup is milliseconds, a held `wait` up to 30 s. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Queue jobs: a test completion is milliseconds, a 1,000-row chunk behind a slow source minutes. */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** One call to a data source (a batch counts as one call). */
const SOURCE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** One webhook attempt, bounded by WEBHOOK_TIMEOUT_MS (10 s). */
const WEBHOOK_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  // Gateway: RED per route template.
  httpRequests: lazy(
    () =>
      new Counter({
        name: "svc_http_requests_total",
        help: "HTTP requests answered by the gateway, by method, route template (\"(no route)\" when none matched) and status code.",
        labelNames: ["method", "route", "status"] as const,
        registers,
      }),
  ),
  httpDuration: lazy(
    () =>
      new Histogram({
        name: "svc_http_request_duration_seconds",
        help: "Time from a request's arrival to the end of its response, by method, route template and status class (2xx..5xx).",
        labelNames: ["method", "route", "status_class"] as const,
        buckets: HTTP_BUCKETS,
        registers,
      }),
  ),

  // Queues (BullMQ).
  queueMessages: lazy(
    () =>
      new Gauge({
        name: "svc_queue_messages",
        help: "Messages in a queue by state (waiting, active, delayed, failed), read from BullMQ when scraped. Every replica of the consuming service reports the same queue: aggregate with max, not sum.",
        labelNames: ["queue", "state"] as const,
        registers,
        aggregator: "max",
      }),
  ),
  queueOldestWaitingAge: lazy(
    () =>
      new Gauge({
        name: "svc_queue_oldest_waiting_age_seconds",
        help: "How long the oldest waiting message of a queue has been ready to run (0 when none waits). Same for every replica: aggregate with max.",
        labelNames: ["queue"] as const,
        registers,
        aggregator: "max",
      }),
  ),
  jobsProcessed: lazy(
    () =>
      new Counter({
        name: "svc_queue_jobs_processed_total",
        help: "Queue messages this process handled, by queue, job name and outcome (ok; error: the handler threw and BullMQ retries or fails it; refused: not written with the fleet's key, failed unread).",
        labelNames: ["queue", "name", "outcome"] as const,
        registers,
      }),
  ),
  noticesRefused: lazy(
    () =>
      new Counter({
        name: "svc_notices_refused_total",
        help: "Completion notices addressed to a waiter here that did not open with the fleet's key (forged, replayed late, or another fleet's): dropped, the waiter reads Postgres instead.",
        registers,
      }),
  ),
  jobDuration: lazy(
    () =>
      new Histogram({
        name: "svc_queue_job_duration_seconds",
        help: "Time a handler spent on one queue message, by queue and job name.",
        labelNames: ["queue", "name"] as const,
        buckets: JOB_BUCKETS,
        registers,
      }),
  ),

  // Checks and data sources (check-worker).
  checkAnswers: lazy(
    () =>
      new Counter({
        name: "svc_check_answers_total",
        help: "Answers to checks by check, source (a route name, \"cache\", \"coverage\" for countries a check does not cover, \"none\" when no route could answer) and outcome (the answer's status).",
        labelNames: ["check", "source", "outcome"] as const,
        registers,
      }),
  ),
  sourceDuration: lazy(
    () =>
      new Histogram({
        name: "svc_source_request_duration_seconds",
        help: "One call to a data source route (a batch is one call; each retry is a call), by route and outcome (ok, timeout, unavailable, rejected, bad_response, error).",
        labelNames: ["source", "outcome"] as const,
        buckets: SOURCE_BUCKETS,
        registers,
      }),
  ),
  sourceBreakerOpen: lazy(
    () =>
      new Gauge({
        name: "svc_source_breaker_open",
        help: "1 while this process's circuit breaker for a route is open (calls skip the route), else 0.",
        labelNames: ["source"] as const,
        registers,
        aggregator: "max",
      }),
  ),
  sourceRetries: lazy(
    () =>
      new Counter({
        name: "svc_source_retries_total",
        help: "Calls to a data source route that were retries of a failed call.",
        labelNames: ["source"] as const,
        registers,
      }),
  ),
  sourceFailovers: lazy(
    () =>
      new Counter({
        name: "svc_source_failovers_total",
        help: "Identifiers a check's route could not answer (failed, or breaker open) that were handed to the check's next route.",
        labelNames: ["check"] as const,
        registers,
      }),
  ),

  // Money.
  reservations: lazy(
    () =>
      new Counter({
        name: "svc_reservations_total",
        help: "Reservations the gateway attempted for live lookups and jobs, by key mode (live, agent) and outcome (reserved, refused: balance or a cap).",
        labelNames: ["mode", "outcome"] as const,
        registers,
      }),
  ),
  reservedMicros: lazy(
    () =>
      new Counter({
        name: "svc_reserved_micros_total",
        help: "Money reserved by the gateway (the maximum possible cost of live requests), in micro-USD, by key mode.",
        labelNames: ["mode"] as const,
        registers,
      }),
  ),
  settlements: lazy(
    () =>
      new Counter({
        name: "svc_settlements_total",
        help: "Settlement runs by outcome (the billing-ledger; the check-worker for a job it finishes; the gateway for a cancel or purge): closed (the reservation was closed), partial (answers settled, reservation still open), nothing (nothing left to settle: a repeat), error (the transaction failed and is retried).",
        labelNames: ["outcome"] as const,
        registers,
      }),
  ),
  settledMicros: lazy(
    () =>
      new Counter({
        name: "svc_settled_micros_total",
        help: "Money settled (by the billing-ledger, the check-worker finishing a job, or the gateway cancelling or purging one), in micro-USD: charged (conclusive answers) or released (everything else, and what a closed reservation did not use).",
        labelNames: ["kind"] as const,
        registers,
      }),
  ),
  ledgerOldestUnsettled: lazy(
    () =>
      new Gauge({
        name: "svc_ledger_oldest_unsettled_seconds",
        help: "The ledger's lag: how long the oldest settlement that is due has been waiting (an open reservation whose lookup or job finished or that expired, or a finished chunk of a running job with nothing settled); 0 when none.",
        registers,
        aggregator: "max",
      }),
  ),
  ledgerImbalance: lazy(
    () =>
      new Gauge({
        name: "svc_ledger_imbalance_micros",
        help: "From the ledger reconciliation (as `admin ledger reconcile`, over every account): the sum of |ledger balance - cached balance| + |reserved - open reservations|, in micro-USD. 0 when balanced.",
        registers,
        aggregator: "max",
      }),
  ),
  ledgerUnbalancedAccounts: lazy(
    () =>
      new Gauge({
        name: "svc_ledger_unbalanced_accounts",
        help: "From the ledger reconciliation: accounts whose ledger and cached balances, or holds and open reservations, differ.",
        registers,
        aggregator: "max",
      }),
  ),
  ledgerReconciledAt: lazy(
    () =>
      new Gauge({
        name: "svc_ledger_reconciled_timestamp_seconds",
        help: "Unix time of this process's last completed ledger reconciliation (the imbalance figures are as of then).",
        registers,
        aggregator: "max",
      }),
  ),

  // Webhooks.
  webhookAttempts: lazy(
    () =>
      new Counter({
        name: "svc_webhook_attempts_total",
        help: "Webhook delivery attempts by outcome: success, or the failure (http_error, timeout, connection_refused, connection_error, tls_error, dns_error, redirect, url_refused).",
        labelNames: ["outcome"] as const,
        registers,
      }),
  ),
  webhookDuration: lazy(
    () =>
      new Histogram({
        name: "svc_webhook_delivery_duration_seconds",
        help: "Time one webhook attempt took, from connecting to the status line or failure.",
        buckets: WEBHOOK_BUCKETS,
        registers,
      }),
  ),
  webhookDeliveries: lazy(
    () =>
      new Gauge({
        name: "svc_webhook_deliveries",
        help: "Webhook deliveries in Postgres by state: pending (due or waiting for a retry), held (endpoint not verified yet), failed (gave up); read when scraped. Same for every replica: aggregate with max.",
        labelNames: ["state"] as const,
        registers,
        aggregator: "max",
      }),
  ),

  // Postgres pool.
  dbPool: lazy(
    () =>
      new Gauge({
        name: "svc_db_pool_connections",
        help: "This process's Postgres pool: total connections open, idle ones, and requests waiting for a connection (in use = total - idle).",
        labelNames: ["state"] as const,
        registers,
      }),
  ),

  // Gateway reads and the read replica (DATABASE_REPLICA_URL).
  dbReads: lazy(
    () =>
      new Counter({
        name: "svc_db_reads_total",
        help: "Reads the gateway may send to the read replica, by read (lookup, results: job result pages, download: job downloads, usage) and the database that answered (primary, replica).",
        labelNames: ["read", "target"] as const,
        registers,
      }),
  ),
  replicaFallbacks: lazy(
    () =>
      new Counter({
        name: "svc_db_replica_fallbacks_total",
        help: "Reads meant for the read replica that the primary answered instead, by read and reason: unavailable (replica unreachable or too far behind), error (the read failed on it), behind (its copy was not yet the one the read needs).",
        labelNames: ["read", "reason"] as const,
        registers,
      }),
  ),
  replicaLag: lazy(
    () =>
      new Gauge({
        name: "svc_db_replica_lag_seconds",
        help: "How far the read replica was behind the primary at the gateway's last probe (0 when it is not a streaming standby); not updated while the probe fails.",
        registers,
        aggregator: "max",
      }),
  ),
  replicaUsable: lazy(
    () =>
      new Gauge({
        name: "svc_db_replica_usable",
        help: "1 when the gateway sends reads to the read replica (reachable and within DATABASE_REPLICA_MAX_LAG_MS at the last probe), else 0.",
        registers,
        aggregator: "min",
      }),
  ),

  // Gateway bulk intake.
  intakeTasks: lazy(
    () =>
      new Gauge({
        name: "svc_bulk_intake_tasks",
        help: "Bulk requests (jobs, estimates, CSV uploads) on the gateway's intake threads: running, or queued for a thread.",
        labelNames: ["state"] as const,
        registers,
      }),
  ),
  intakeRefused: lazy(
    () =>
      new Counter({
        name: "svc_bulk_intake_refused_total",
        help: "Bulk requests answered 503 by the intake: the account's share of the queue was full, or the request waited INTAKE_MAX_WAIT_MS.",
        registers,
      }),
  ),
};

/** A failed call's outcome word for a data source, from the error's kind. */
export function sourceOutcome(err: unknown): string {
  const kind = (err as { kind?: unknown } | null)?.kind;
  if (kind === "timeout" || kind === "unavailable" || kind === "rejected" || kind === "bad_response") return kind;
  const name = (err as { name?: unknown } | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") return "timeout";
  return "error";
}
