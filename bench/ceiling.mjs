#!/usr/bin/env node
// This machine's ceilings, measured now (bench/lib/ceilings.mjs says what each is and
// which figure it bounds): a bare node:http cluster with the gateway's process count,
// single-row inserts through pg with the gateway's pool settings, a Redis round trip,
// libphonenumber parsing of 50,000 numbers, and streaming 50,000 rows from Postgres.
// JSON on stdout (and in --out FILE, for the bench scripts' --ceilings FILE), a table on stderr.
//
//   flock /tmp/bench.lock node bench/ceiling.mjs [--duration 10] [--only http,insert,redis,parse,read]
//       [--processes N] [--pool-size N] [--intake-threads N] [--pgbench] [--express] [--out bench/results/ceilings.json]
//
// --express adds the least an Express gateway can do per test lookup (a minimal Express
// cluster storing one group-committed row per request; bench/lib/ceilings.mjs).
//
// Defaults follow the gateway: WEB_CONCURRENCY (else one per core, at most 4, as `npm
// run up`), DATABASE_POOL_SIZE and INTAKE_THREADS (else the gateway's config defaults).
// Needs the local Postgres (a scratch database, svc_bench_ceiling, made when missing)
// and Redis. --duration is the http and insert measuring time: give the lookup bench's.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ALL, DEFAULT_CEILING_DATABASE_URL, headline, measureCeilings } from "./lib/ceilings.mjs";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "16" },
    only: { type: "string", default: ALL.join(",") },
    processes: { type: "string" },
    "pool-size": { type: "string" },
    "intake-threads": { type: "string" },
    pgbench: { type: "boolean", default: false },
    express: { type: "boolean", default: false },
    out: { type: "string", default: "" },
    "database-url": { type: "string", default: process.env.CEILING_DATABASE_URL ?? DEFAULT_CEILING_DATABASE_URL },
  },
});

const names = values.only.split(",").map((s) => s.trim()).filter(Boolean);
if (values.pgbench && !names.includes("pgbench")) names.push("pgbench");
if (values.express && !names.includes("express")) names.push("express");
const num = (v) => (v === undefined ? undefined : Number(v));
const ceilings = await measureCeilings(names, {
  processes: num(values.processes),
  poolSize: num(values["pool-size"]),
  intakeThreads: num(values["intake-threads"]),
  httpDuration: Number(values.duration),
  insertDuration: Number(values.duration),
  warmup: Number(values.warmup),
  connections: Number(values.connections),
  databaseUrl: values["database-url"],
});
ceilings.command = `node bench/ceiling.mjs ${process.argv.slice(2).join(" ")}`.trim();

if (values.out) {
  mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(ceilings, null, 2)}\n`);
}
process.stderr.write(`\nCeilings (${ceilings.measured_at}, ${ceilings.commit}, load average ${ceilings.machine.loadavg_before.join(" ")} → ${ceilings.machine.loadavg_after.join(" ")})\n| Ceiling | Measured | Bounds |\n|---|---|---|\n`);
const BOUNDS = {
  http: "test-mode lookups/s, webhook deliveries/s; round trip: live lookup latency",
  insert: "test-mode lookups/s (one insert each), reservations/s, live checks/s; round trips: live lookup latency",
  redis: "live lookup latency (enqueue, completion notice)",
  parse: "50,000-row test job, estimates",
  read: "downloads",
  pgbench: "(comparison with the issue's figure)",
  express: "test-mode lookups/s under the fixed shape (an Express gateway, one insert each)",
};
for (const name of names) process.stderr.write(`| ${name} | ${headline(ceilings, name)} | ${BOUNDS[name] ?? ""} |\n`);
console.log(JSON.stringify(ceilings, null, 2));
