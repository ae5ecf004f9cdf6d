#!/usr/bin/env node
// Live lookups through the whole fleet against the vendor simulator:
//
//   node bench/live-lookups.mjs [--latency 200] [--workers 1] [--numbers 10] [--connections 32] [--duration 20] [--worker-concurrency 50]
//
// Starts its own fleet on the local Postgres and Redis (a fresh Redis prefix): the
// simulator (in this process, a real socket) with the given latency, the gateway,
// `--workers` check-worker replicas and a billing-ledger. Each request is a live
// POST /v1/lookup of `--numbers` fresh random US numbers × `whatsapp`, waiting for
// the answers; 100 keys share the load (each key may send 10 a second).
//
// Prints its figures as ratios to the ceilings that bound them (bench/lib/ceilings.mjs),
// measured at the start of the run before the fleet starts (or read with --ceilings FILE
// from a bench/ceiling.mjs JSON taken just before; --ceilings none skips them):
// latency against the unloaded round trips of a bare node:http server and of Redis
// (PING), checks/s against single-row inserts/s through pg. The issue-14 latency
// targets (p50 < 8 ms, p99 < 25 ms) apply to one number, one connection, 0 ms source.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Fleet, seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv } from "../scripts/lib.mjs";
import { CEILING_OPTIONS, ceilingsFor, printRatios, ratioRow } from "./lib/ceilings.mjs";

ensureDotEnv();

const { values } = parseArgs({
  options: {
    latency: { type: "string", default: "200" },
    workers: { type: "string", default: "1" },
    numbers: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    port: { type: "string", default: "8190" },
    "worker-concurrency": { type: "string", default: "50" },
    ...CEILING_OPTIONS,
  },
});
// The ceilings first, before the fleet starts. The gateway here runs one process (WEB_CONCURRENCY=1).
const ceilings = await ceilingsFor(values.ceilings, ["http", "insert", "redis"], { httpProcesses: 1, httpDuration: 5, insertDuration: 5 });

const prefix = `bench-${randomBytes(3).toString("hex")}`;
// Whatever ends this script stops what it started (they would hold its pipes open); a service dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
// The simulator runs in its own process, so the load generator's CPU does not delay its answers.
const simPort = Number(values.port) + 1;
await fleet.startService("vendor-simulator", { env: { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: values.latency }, stdout: "ignore", stderr: "inherit", ready: null });
// METRICS_PORT 0: with --workers 2 the check-workers would want the same operations port.
const env = { ...process.env, REDIS_PREFIX: prefix, LOG_LEVEL: "warn", PORT: values.port, WEB_CONCURRENCY: "1", METRICS_PORT: "0", VENDOR_PRIMARY_URL: `http://127.0.0.1:${simPort}`, VENDOR_PRIMARY_KEY: "sim-key", VENDOR_RETRIES: "0", CONCURRENCY: values["worker-concurrency"] };
// BENCH_PROFILE=<service> writes a CPU profile of that service to /tmp/svc-profiles.
// Service logs (warn and above) go to stderr, so failures under load are visible.
const start = (name) =>
  fleet.startService(name, { env, nodeFlags: process.env.BENCH_PROFILE === name ? ["--cpu-prof", "--cpu-prof-dir=/tmp/svc-profiles"] : [], keep: 0, onLine: (line) => process.stderr.write(`${line}\n`), stderr: "inherit", ready: null });
await start("gateway");
for (let i = 0; i < Number(values.workers); i += 1) await start("check-worker");
await start("billing-ledger");
await new Promise((r) => setTimeout(r, 3_000)); // services up, routes advertised

const { keys } = await seedAccount(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode: "live", count: 100, name: "bench-live", balanceMicros: 1_000_000_000_000n });

const perRequest = Number(values.numbers);
const randomNumber = () => `+1212${String(2_000_000 + Math.floor(Math.random() * 7_999_999)).padStart(7, "0")}`;
let n = 0;
let pending = 0;
const statuses = {};
let sampleError = null;
const load = (duration) =>
  autocannon({
    url: `http://127.0.0.1:${values.port}/v1/lookup`,
    connections: Number(values.connections),
    duration,
    requests: [
      {
        method: "POST",
        setupRequest: (req) => ({
          ...req,
          headers: { "content-type": "application/json", authorization: `Bearer ${keys[n++ % keys.length]}` },
          body: JSON.stringify({ numbers: Array.from({ length: perRequest }, randomNumber), checks: ["whatsapp"], wait: 10 }),
        }),
        onResponse: (status, body) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 202) pending += 1;
          if (status >= 400 && !sampleError) sampleError = body?.toString().slice(0, 300);
        },
      },
    ],
  });
if (Number(values.warmup) > 0) await load(Number(values.warmup));
pending = 0;
for (const k of Object.keys(statuses)) delete statuses[k];
const result = await load(Number(values.duration));
const lookupsPerS = result.requests.average;
const figures = {
  command: `node bench/live-lookups.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  simulator_latency_ms: Number(values.latency),
  check_workers: Number(values.workers),
  worker_concurrency: Number(values["worker-concurrency"]),
  numbers_per_lookup: perRequest,
  connections: Number(values.connections),
  lookups: result.requests.total,
  lookups_per_s: Math.round(lookupsPerS),
  checks_per_s: Math.round(lookupsPerS * perRequest),
  answered_pending_202: pending,
  non_2xx: result.non2xx,
  statuses,
  sample_error: sampleError,
  latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
};
if (ceilings) {
  // The latency targets are for one number, unloaded (one connection), at a 0 ms source.
  const unloaded = perRequest === 1 && Number(values.connections) === 1 && Number(values.latency) === 0;
  const clean = result.requests.total > 0 && result.non2xx === 0 && result.errors === 0 && pending === 0; // no verdict on failed or unanswered lookups
  const tag = `${perRequest} number(s), ${values.connections} connection(s), ${values.latency} ms source`;
  figures.ceilings = { measured_at: ceilings.measured_at, http: ceilings.http, insert: ceilings.insert, redis: ceilings.redis };
  figures.ratios = [
    ratioRow({ figure: `Live lookup p50 (${tag}) ÷ bare http round trip p50`, value: result.latency.p50, unit: "ms", ceiling: "http round trip p50", ceilingValue: ceilings.http.round_trip_ms.p50, ceilingUnit: "ms", ...(unloaded ? { target: "p50 < 8 ms", met: clean && result.latency.p50 < 8 } : {}) }),
    ratioRow({ figure: `Live lookup p99 (${tag}) ÷ bare http round trip p99`, value: result.latency.p99, unit: "ms", ceiling: "http round trip p99", ceilingValue: ceilings.http.round_trip_ms.p99, ceilingUnit: "ms", ...(unloaded ? { target: "p99 < 25 ms", met: clean && result.latency.p99 < 25 } : {}) }),
    // Unloaded, the floor is a handful of Redis and Postgres round trips; loaded, throughput is the figure.
    ...(Number(values.connections) === 1
      ? [
          ratioRow({ figure: `Live lookup p50 (${tag}) ÷ Redis PING p50`, value: result.latency.p50, unit: "ms", ceiling: "redis PING p50", ceilingValue: ceilings.redis.ping_ms.p50, ceilingUnit: "ms" }),
          ratioRow({ figure: `Live lookup p50 (${tag}) ÷ pg insert round trip p50`, value: result.latency.p50, unit: "ms", ceiling: "pg insert round trip p50", ceilingValue: ceilings.insert.round_trip_ms.insert.p50, ceilingUnit: "ms" }),
        ]
      : [ratioRow({ figure: `Live checks/s (${tag}) ÷ single-row inserts/s`, value: figures.checks_per_s, unit: "checks/s", ceiling: "insert", ceilingValue: ceilings.insert.inserts_per_s, ceilingUnit: "inserts/s" })]),
  ];
  printRatios(figures.ratios);
}
console.log(JSON.stringify(figures, null, 2));
await fleet.stop();
