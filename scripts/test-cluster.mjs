#!/usr/bin/env node
// The fleet tests once more, on a Redis Cluster: jest's global setup starts a local
// 3-master + 3-replica cluster (scripts/redis-cluster.mjs, free loopback ports) for the
// run, every test file and every service it starts connects to it
// (REDIS_URL=redis+cluster://...), and the teardown stops it. `npm test` runs this after
// the main suite. Arguments replace the default set of test paths (and may carry jest options).
//
//   node scripts/test-cluster.mjs                 # the default set below
//   node scripts/test-cluster.mjs tests/live/jobs.test.ts
import { run, step } from "./lib.mjs";

/**
 * What runs on the cluster: everything that moves work through the queues and the
 * completion notices, and the Redis-facing units (queues, sources, the rate limiter).
 * The master-kill tests (tests/fleet/redis-failover, packages/queues/src/notices/notifier-failover) and
 * the TLS one (tests/fleet/redis-tls) start clusters of their own in the main run, so they are
 * not repeated here.
 */
export const CLUSTER_TEST_PATHS = [
  "packages/queues",
  "packages/sources/src/availability.test.ts",
  "services/gateway/src/http/rate-limit.test.ts",
  "tests/fleet",
  "tests/live",
  "tests/jobs",
  "tests/billing",
  "tests/webhooks/fleet.test.ts",
  "tests/gateway/lookup-validation.test.ts",
  "tests/gateway/queue-dashboard.test.ts",
];

const args = process.argv.slice(2);
const paths = args.some((a) => !a.startsWith("-")) ? args : [...CLUSTER_TEST_PATHS, ...args];
step("Running the fleet tests on a local Redis Cluster (SVC_TEST_REDIS=cluster)");
run(process.execPath, ["node_modules/jest/bin/jest.js", ...paths, "--testPathIgnorePatterns", "/node_modules/", "/dist/", "(failover|redis-tls)\\.test\\.ts$"], {
  env: { ...process.env, SVC_TEST_REDIS: "cluster", TURBO_TELEMETRY_DISABLED: "1" },
});
