#!/usr/bin/env node
// Bulk-job figures against a fleet this script starts (fresh Redis prefix, the local
// Postgres): a 50,000-identifier test job, estimates, downloads (with the gateway's
// memory), and live jobs through 1 and 2 check-workers with the simulator at 0 ms.
//
//   node bench/jobs.mjs [--rows 50000] [--skip-live] [--ceilings FILE|none]
//
// Prints each figure as a ratio to the ceiling that bounds it (bench/lib/ceilings.mjs),
// measured at the start of the run (or read from a bench/ceiling.mjs JSON taken just
// before): the test job and the estimates against libphonenumber parsing the same
// 50,000 numbers on the gateway's intake threads of one process (INTAKE_THREADS; warm),
// the downloads against streaming 50,000 rows from Postgres the way the download reads
// them, the live job against 50,000 single-row inserts at the pg insert ceiling.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { Fleet, httpOk, seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv } from "../scripts/lib.mjs";
import { CEILING_OPTIONS, ceilingsFor, printRatios, ratioRow } from "./lib/ceilings.mjs";

ensureDotEnv();

const { values } = parseArgs({ options: { rows: { type: "string", default: "50000" }, port: { type: "string", default: "8290" }, "skip-live": { type: "boolean", default: false }, ...CEILING_OPTIONS } });
// The ceilings first. The gateway here runs one process (WEB_CONCURRENCY=1), so one request's parse runs on INTAKE_THREADS threads.
const ceilings = await ceilingsFor(values.ceilings, values["skip-live"] ? ["parse", "read"] : ["parse", "read", "insert"], { parseProcesses: 1, insertDuration: 5 });
const N = Number(values.rows);
const base = `http://127.0.0.1:${values.port}`;
// METRICS_PORT 0: two check-workers (or a fleet of `npm run up`) would want the same operations port.
const baseEnv = { ...process.env, LOG_LEVEL: "warn", PORT: values.port, WEB_CONCURRENCY: "1", METRICS_PORT: "0" };
// Whatever ends this script stops what it started; a service that dies on its own ends the run.
const fleet = new Fleet({ failFast: true });
/** A built program in `env`, its log (warn and above) on our stderr; the gateway is up once it answers /v1/health. */
const start = (name, env) =>
  fleet.startService(name, { env, stdout: "ignore", stderr: "inherit", ...(name === "gateway" ? { ready: httpOk(`${base}/v1/health`), readyTimeoutMs: 30_000 } : { ready: null }) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

const keyFor = async (mode) =>
  (await seedAccount(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode, name: `bench-${mode}`, balanceMicros: 1_000_000_000_000n })).keys[0];

// Distinct US numbers, 7 apart (no runs of consecutive numbers).
const numbers = (n, salt) => Array.from({ length: n }, (_, i) => `+1212${String(2_000_000 + ((i * 7 + salt) % 7_999_999)).padStart(7, "0")}`);

async function call(method, url, key, body) {
  const t = performance.now();
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, ms: Math.round(performance.now() - t), body: text.length < 100_000 ? JSON.parse(text || "null") : null, bytes: text.length };
}

const results = { command: `node bench/jobs.mjs ${process.argv.slice(2).join(" ")}`.trim(), rows: N };

// --- test mode: gateway only -------------------------------------------------
let prefix = `bench-${randomBytes(3).toString("hex")}`;
const starting = start("gateway", { ...baseEnv, REDIS_PREFIX: prefix });
await sleep(2_000); // the pause the figures were always taken after
const gateway = await starting;
const testKey = await keyFor("test");
const list = numbers(N, 3);
results.estimate_test_ms = (await call("POST", `${base}/v1/jobs/estimate`, testKey, { numbers: list, checks: ["number.spam"] })).ms;
const created = await call("POST", `${base}/v1/jobs`, testKey, { numbers: list, checks: ["number.spam"] });
results.test_job = { status: created.status, job_status: created.body?.status, ms: created.ms };

for (const format of ["csv", "ndjson"]) {
  const before = rssMb(gateway.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(gateway.pid))), 20);
  const dl = await call("GET", `${base}/v1/jobs/${created.body.id}/download?format=${format}`, testKey);
  clearInterval(sampler);
  results[`download_${format}`] = { status: dl.status, ms: dl.ms, megabytes: Math.round(dl.bytes / 1e5) / 10, gateway_rss_before_mb: Math.round(before), gateway_rss_peak_mb: Math.round(peak), growth_mb: Math.round(peak - before) };
}
await fleet.stop();

// --- live mode: simulator at 0 ms, 1 and 2 check-workers ----------------------
if (!values["skip-live"]) {
  for (const workers of [1, 2]) {
    prefix = `bench-${randomBytes(3).toString("hex")}`;
    const simPort = Number(values.port) + 1;
    const env = { ...baseEnv, REDIS_PREFIX: prefix, VENDOR_PRIMARY_URL: `http://127.0.0.1:${simPort}`, VENDOR_PRIMARY_KEY: "sim-key" };
    const run = [
      start("vendor-simulator", { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: "0" }),
      start("gateway", env),
      start("billing-ledger", env),
      ...Array.from({ length: workers }, () => start("check-worker", env)),
    ];
    await sleep(3_000); // as above
    await Promise.all(run);
    const liveKey = await keyFor("live");
    const liveList = numbers(N, 11 + workers);
    if (workers === 1) results.estimate_live_ms = (await call("POST", `${base}/v1/jobs/estimate`, liveKey, { numbers: liveList, checks: ["whatsapp"] })).ms;
    const t0 = performance.now();
    const job = await call("POST", `${base}/v1/jobs`, liveKey, { numbers: liveList, checks: ["whatsapp"] });
    let status = job.body?.status;
    while (status !== "completed" && status !== "failed" && performance.now() - t0 < 300_000) {
      status = (await call("GET", `${base}/v1/jobs/${job.body.id}?wait=30`, liveKey)).body?.status;
    }
    results[`live_job_${workers}_workers`] = { create_ms: job.ms, status, end_to_end_s: Math.round((performance.now() - t0) / 100) / 10 };
    await fleet.stop();
  }
  const one = results.live_job_1_workers.end_to_end_s;
  const two = results.live_job_2_workers.end_to_end_s;
  results.speedup_2_vs_1 = Math.round((one / two) * 100) / 100;
}
if (ceilings) {
  const parseMs = ceilings.parse.split_ms;
  const parseLabel = `parse ${ceilings.parse.numbers} on ${ceilings.parse.split_threads} thread(s), warm`;
  const r = results;
  results.ceilings = { measured_at: ceilings.measured_at, parse: ceilings.parse, read: ceilings.read, ...(ceilings.insert ? { insert: ceilings.insert } : {}) };
  results.ratios = [
    ratioRow({ figure: `Test job of ${N} numbers, POST to completed (cold gateway)`, value: r.test_job.ms, unit: "ms", ceiling: parseLabel, ceilingValue: parseMs, ceilingUnit: "ms", target: "≤ 1.5× (issue 14); < 3 s", met: r.test_job.ms <= 1.5 * parseMs && r.test_job.ms < 3000 && r.test_job.job_status === "completed" }),
    ...(ceilings.parse.one_thread_sched_idle_ms
      ? [ratioRow({ figure: `Same test job ÷ the parse under SCHED_IDLE (as the intake threads run)`, value: r.test_job.ms, unit: "ms", ceiling: `parse ${ceilings.parse.numbers} on 1 thread, SCHED_IDLE, warm`, ceilingValue: ceilings.parse.one_thread_sched_idle_ms, ceilingUnit: "ms" })]
      : []),
    ratioRow({ figure: `Estimate of ${N}, test key`, value: r.estimate_test_ms, unit: "ms", ceiling: parseLabel, ceilingValue: parseMs, ceilingUnit: "ms", target: "< 1.5 s", met: r.estimate_test_ms < 1500 }),
    ...(r.estimate_live_ms !== undefined ? [ratioRow({ figure: `Estimate of ${N}, live key`, value: r.estimate_live_ms, unit: "ms", ceiling: parseLabel, ceilingValue: parseMs, ceilingUnit: "ms", target: "< 1.5 s", met: r.estimate_live_ms < 1500 })] : []),
    ...["csv", "ndjson"].flatMap((f) => {
      const d = r[`download_${f}`];
      return [
        ratioRow({ figure: `Download of ${N} rows, ${f.toUpperCase()} (${d.megabytes} MB)`, value: d.ms, unit: "ms", ceiling: `pg stream of ${ceilings.read.rows} rows`, ceilingValue: ceilings.read.ms, ceilingUnit: "ms", target: "< 2 s", met: d.status === 200 && d.ms < 2000 }),
        // Flat memory: the gateway's RSS grows by far less than the file (a buffered download would grow by more than its size).
        ratioRow({ figure: `Gateway RSS growth during the ${f.toUpperCase()} download`, value: d.growth_mb, unit: "MB", ceiling: "the file's size", ceilingValue: d.megabytes, ceilingUnit: "MB", target: "flat: < 8 MB", met: d.growth_mb < 8 }),
      ];
    }),
    ...(r.live_job_1_workers && ceilings.insert
      ? [
          ratioRow({ figure: `Live job ${N} × 1 check, 1 check-worker, 0 ms source`, value: r.live_job_1_workers.end_to_end_s, unit: "s", ceiling: `${N} single-row inserts at the insert ceiling`, ceilingValue: Math.round((N / ceilings.insert.inserts_per_s) * 100) / 100, ceilingUnit: "s", target: "< 20 s", met: r.live_job_1_workers.status === "completed" && r.live_job_1_workers.end_to_end_s < 20 }),
          ratioRow({ figure: "Same with 2 check-workers: speed-up over 1", value: r.speedup_2_vs_1, unit: "×", ceiling: "", ceilingValue: NaN, ceilingUnit: "", target: "≥ 1.6×", met: r.speedup_2_vs_1 >= 1.6 }),
        ]
      : []),
  ];
  printRatios(results.ratios);
}
console.log(JSON.stringify(results, null, 2));
await fleet.stop();
