#!/usr/bin/env node
// Load test: test-mode POST /v1/lookup (one number, number.spam) through many keys
// (each key is rate limited to 10 a second, so 1,500 req/s needs at least 150 keys)
// against a running fleet (`npm run up`). Creates its own account and keys.
//
//   node bench/lookup-load.mjs [--url http://localhost:8080] [--keys 50] [--connections 64] [--duration 20]
//        [--processes N] [--ceilings FILE|none]
//
// Prints req/s as a ratio to the ceilings that bound it (bench/lib/ceilings.mjs),
// measured at the start of the run (or read from a bench/ceiling.mjs JSON taken just
// before): single-row inserts/s through pg with the gateway's pool settings (a test
// lookup is little more than one insert; target ≥ 30 %, issue 14) and a bare node:http
// cluster's req/s with the fleet's process count (--processes, default WEB_CONCURRENCY
// or one per core as `npm run up`), measured for the same --duration.
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv } from "../scripts/lib.mjs";
import { CEILING_OPTIONS, ceilingsFor, printRatios, ratioRow } from "./lib/ceilings.mjs";

ensureDotEnv();

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.BENCH_URL ?? `http://localhost:${process.env.PORT ?? 8080}` },
    keys: { type: "string", default: "400" },
    connections: { type: "string", default: "64" },
    duration: { type: "string", default: "20" },
    workers: { type: "string", default: "0" },
    warmup: { type: "string", default: "5" },
    processes: { type: "string" },
    ...CEILING_OPTIONS,
  },
});
// The ceilings first, while the fleet is idle (the same machine minutes, not another session's).
const ceilings = await ceilingsFor(values.ceilings, ["http", "insert"], { processes: values.processes ? Number(values.processes) : undefined, httpDuration: Number(values.duration) });

const { keys } = await seedAccount(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode: "test", count: Number(values.keys), name: "bench", balanceMicros: 0n });

let n = 0;
const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
const load = (duration) =>
  autocannon({
    url: `${values.url}/v1/lookup`,
    connections: Number(values.connections),
    duration,
    workers: Number(values.workers) || undefined,
    requests: [
      {
        method: "POST",
        setupRequest: (req) => ({ ...req, body, headers: { "content-type": "application/json", authorization: `Bearer ${keys[n++ % keys.length]}` } }),
      },
    ],
  });
// Warm-up (JIT, connection pools, key caches) is run and discarded.
if (Number(values.warmup) > 0) await load(Number(values.warmup));
const result = await load(Number(values.duration));
const summary = {
  command: `node bench/lookup-load.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  keys: keys.length,
  connections: Number(values.connections),
  duration_s: Number(values.duration),
  requests: result.requests.total,
  non_2xx: result.non2xx,
  errors: result.errors,
  req_per_s: Math.round(result.requests.average),
  latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
};
if (ceilings) {
  const reqs = summary.req_per_s;
  const clean = summary.requests > 0 && summary.non_2xx === 0 && summary.errors === 0; // no verdict on failed requests
  summary.ceilings = { measured_at: ceilings.measured_at, http: ceilings.http, insert: ceilings.insert };
  summary.ratios = [
    ratioRow({ figure: "Test-mode lookups/s ÷ single-row inserts/s", value: reqs, unit: "req/s", ceiling: "insert", ceilingValue: ceilings.insert.inserts_per_s, ceilingUnit: "inserts/s", target: "≥ 0.30", met: clean && reqs / ceilings.insert.inserts_per_s >= 0.3 }),
    ratioRow({ figure: "Test-mode lookups/s ÷ bare node:http req/s", value: reqs, unit: "req/s", ceiling: "http", ceilingValue: ceilings.http.req_per_s, ceilingUnit: "req/s" }),
    ratioRow({ figure: "Test-mode lookup p99 under that load", value: result.latency.p99, unit: "ms", ceiling: "http p99 under load", ceilingValue: ceilings.http.latency_ms.p99, ceilingUnit: "ms", target: "< 50 ms", met: clean && result.latency.p99 < 50 }),
  ];
  printRatios(summary.ratios);
}
console.log(JSON.stringify(summary, null, 2));
