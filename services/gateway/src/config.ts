import { commonEnv, ConfigError, loadConfig, opsEnv, Type, type Static } from "@svc/config";
import { webhookEnv, webhookSettings, type WebhookSettings } from "@svc/webhooks";

/**
 * The queue dashboard (Bull Board, ./queue-dashboard/): operators only, on a
 * port of its own, never the public API's. Off unless a port is set, since it
 * needs a password no default can provide; on the loopback interface by default
 * (`kubectl port-forward` reaches it there, the pod network does not).
 */
export const queueDashboardEnv = {
  /** 0 = off. 9470 is the documented choice (next to the operations ports 9464-9467). */
  QUEUE_DASHBOARD_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 0 }),
  QUEUE_DASHBOARD_HOST: Type.String({ minLength: 1, default: "127.0.0.1" }),
  /** Basic-auth user name (no colon: Basic auth splits on the first). */
  QUEUE_DASHBOARD_USER: Type.String({ pattern: "^[^:\\s]{1,64}$", default: "operator" }),
  /** Basic-auth password, at least 16 characters; required when the port is set. */
  QUEUE_DASHBOARD_PASSWORD: Type.Optional(Type.String()),
  /** Off: read-only board. On: retry, promote and clean jobs (nothing else: no add, edit, empty, obliterate, pause). */
  QUEUE_DASHBOARD_ACTIONS: Type.Boolean({ default: false }),
};

/** Shortest QUEUE_DASHBOARD_PASSWORD accepted. */
export const QUEUE_DASHBOARD_PASSWORD_MIN = 16;

export const GatewayEnv = Type.Object({
  ...commonEnv,
  ...webhookEnv,
  ...opsEnv(9464),
  /**
   * On SIGTERM the gateway reports not-ready at once and keeps serving this long
   * before it stops accepting, so a load balancer stops sending it requests first
   * (Kubernetes: a few seconds; locally nothing waits).
   */
  DRAIN_DELAY_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 0 }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: "0.0.0.0" }),
  /** Base URL clients use (poll URLs, Location, doc links). Defaults to http://localhost:PORT. */
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: "^https?://[^\\s/]+(/[^\\s]*)?$" })),
  /** Server secret for the keyed hash of API keys (HMAC-SHA256) and for signing challenges. */
  KEY_HASH_SECRET: Type.String({ minLength: 32 }),
  /** Same secret as the check-workers': estimates count cached answers by their keyed identifier hashes. */
  CACHE_HASH_SECRET: Type.String({ minLength: 32 }),
  /** Comma-separated addresses/CIDRs of proxies whose X-Forwarded-For is trusted; empty = use the socket address. */
  TRUSTED_PROXIES: Type.String({ default: "" }),
  /** Leading zero bits of the test-key proof-of-work (20 ≈ 1 M hashes ≈ 1-3 s in a browser). */
  TEST_KEY_POW_DIFFICULTY: Type.Integer({ minimum: 1, maximum: 32, default: 20 }),
  /** Publish the documented public sandbox key (svc_test_publicSandbox…). */
  SANDBOX_KEY_ENABLED: Type.Boolean({ default: true }),
  /**
   * Gateway processes on this host (node:cluster, sharing the port). On Kubernetes
   * keep 1 and scale replicas; on a single machine, one per core.
   */
  WEB_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  /**
   * Reservation transactions one gateway process runs at once against one account
   * row; more wait in memory. 2-4 gives the most reservations per second on a hot
   * account (BENCHMARKS.md).
   */
  ACCOUNT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 3 }),
  /**
   * Threads per gateway process that read, validate and plan bulk requests (jobs,
   * estimates, CSV uploads) off the event loop, shared fairly between accounts.
   */
  INTAKE_THREADS: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  /** Bulk requests of one account (sandbox key: one network) that may wait for an intake thread per process; more get 503. */
  INTAKE_QUEUE_PER_ACCOUNT: Type.Integer({ minimum: 0, maximum: 100, default: 8 }),
  /** Longest a bulk request waits for an intake thread before it is answered 503 (retryable, nothing charged). */
  INTAKE_MAX_WAIT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  /** Niceness added to intake threads (0-19), so answering requests, Postgres and Redis come first on a busy host. */
  INTAKE_THREAD_NICE: Type.Integer({ minimum: 0, maximum: 19, default: 10 }),
  /**
   * Linux: intake threads run under SCHED_IDLE, preempted by any other work on the
   * host (Postgres and Redis too, which niceness cannot promise); needs util-linux's
   * `chrt`, else niceness alone. Off: niceness alone.
   */
  INTAKE_THREAD_SCHED_IDLE: Type.Boolean({ default: true }),
  /** Rows per unit of work of a live job (one queue message each). */
  JOB_CHUNK_ROWS: Type.Integer({ minimum: 10, maximum: 10_000, default: 1_000 }),
  /**
   * A read replica (a streaming standby of DATABASE_URL's database). Unset: every read
   * goes to the primary. Set: reads that tolerate lag may go to it — completed
   * lookups, finished jobs' result pages and downloads, usage — under the rules in
   * ./reads/replica-reads.ts, each falling back to the primary. The gateway starts,
   * and stays ready, without it.
   */
  DATABASE_REPLICA_URL: Type.Optional(Type.String({ pattern: "^postgres(ql)?://" })),
  /** Connections of each gateway process to the replica. */
  DATABASE_REPLICA_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /**
   * A replica measured further behind the primary than this is not read at all until it catches up.
   * At least 1.5 s: lag is dated by the once-a-second probe's samples, so a busy replica always reads ~1 s behind.
   */
  DATABASE_REPLICA_MAX_LAG_MS: Type.Integer({ minimum: 1_500, maximum: 3_600_000, default: 10_000 }),
  /** Longest a request may hold for `wait` (the spec allows 30 s). */
  MAX_WAIT_SECONDS: Type.Integer({ minimum: 0, maximum: 30, default: 30 }),
  ...queueDashboardEnv,
});
export type GatewayConfig = Static<typeof GatewayEnv> & { publicBaseUrl: string; trustedProxies: string[]; webhooks: WebhookSettings };

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const c = loadConfig(GatewayEnv, env);
  if (c.DRAIN_DELAY_MS >= c.SHUTDOWN_TIMEOUT_MS) throw new ConfigError(["DRAIN_DELAY_MS must be less than SHUTDOWN_TIMEOUT_MS (the drain delay is part of the shutdown deadline)"]);
  const dashboardProblems = queueDashboardProblems(c);
  if (dashboardProblems.length > 0) throw new ConfigError(dashboardProblems);
  return {
    ...c,
    publicBaseUrl: (c.PUBLIC_BASE_URL ?? `http://localhost:${c.PORT}`).replace(/\/$/, ""),
    trustedProxies: c.TRUSTED_PROXIES.split(",").map((s) => s.trim()).filter(Boolean),
    webhooks: webhookSettings(c),
  };
}

/** The queue dashboard's settings, checked together (values are never echoed). */
function queueDashboardProblems(c: Static<typeof GatewayEnv>): string[] {
  if (c.QUEUE_DASHBOARD_PORT === 0) return [];
  const problems: string[] = [];
  if ((c.QUEUE_DASHBOARD_PASSWORD ?? "").length < QUEUE_DASHBOARD_PASSWORD_MIN) {
    problems.push(`QUEUE_DASHBOARD_PASSWORD must be set, at least ${QUEUE_DASHBOARD_PASSWORD_MIN} characters, when QUEUE_DASHBOARD_PORT is (the dashboard never runs without credentials)`);
  }
  if (c.QUEUE_DASHBOARD_PORT === c.PORT) problems.push("QUEUE_DASHBOARD_PORT must differ from PORT (the dashboard is never on the public API port)");
  if (c.QUEUE_DASHBOARD_PORT === c.METRICS_PORT) problems.push("QUEUE_DASHBOARD_PORT must differ from METRICS_PORT");
  return problems;
}
