#!/usr/bin/env node
// Fairness under a flood (issue 10): one test key floods POST /v1/jobs/estimate with
// 50,000-number bodies (10 a second) while another account sends test-mode
// POST /v1/lookup at 200 a second and a monitor polls GET /v1/health. Both phases —
// without and with the flood — run in the same invocation against a gateway this
// script starts (WEB_CONCURRENCY processes, fresh Redis prefix, the local Postgres).
// Load is open-loop (requests leave on schedule whatever the answers), so a slow
// gateway shows up as latency, not as fewer requests. Quiet and flood segments
// alternate (`--cycles` of each, `--duration` seconds apiece) so that both phases
// see the same drift of a shared machine; each phase's figures pool its segments.
//
//   node bench/fairness.mjs [--duration 10] [--cycles 3] [--processes 2] [--flood-rate 10] [--lookup-rate 200]
//                           [--gateway services/gateway/dist/main.js]   # another build, e.g. the previous commit's
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { Fleet, httpOk, seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv, ROOT } from "../scripts/lib.mjs";

ensureDotEnv();

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    cycles: { type: "string", default: "3" },
    processes: { type: "string", default: "2" },
    "flood-rate": { type: "string", default: "10" },
    "flood-rows": { type: "string", default: "50000" },
    "lookup-rate": { type: "string", default: "200" },
    "health-rate": { type: "string", default: "20" },
    port: { type: "string", default: "8291" },
    gateway: { type: "string", default: path.join(ROOT, "services/gateway/dist/main.js") },
    /** Leaves out the reference phase (as many SCHED_IDLE busy loops as intake threads, nothing of ours: the machine's floor). */
    "skip-reference": { type: "boolean", default: false },
  },
});
const DURATION_MS = Number(values.duration) * 1000;
const base = { host: "127.0.0.1", port: Number(values.port) };
const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- accounts and keys ---------------------------------------------------------
const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
const keys = async (name, count) => (await seedAccount(databaseUrl, { keyHashSecret: process.env.KEY_HASH_SECRET, mode: "test", count, name, balanceMicros: 0n })).keys;
// Each key may send 10 a second: enough keys for the lookup rate with room to spare.
const otherKeys = await keys("bench-fairness-other", Math.ceil(Number(values["lookup-rate"]) / 5));
const [floodKey] = await keys("bench-fairness-flooder", 1);

// --- the gateway -----------------------------------------------------------------
// Stopped whatever ends this script; dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
const prefix = `bench-fair-${randomBytes(3).toString("hex")}`;
const gateway = await fleet.start({
  name: "gateway",
  script: values.gateway,
  cwd: ROOT,
  env: { ...process.env, LOG_LEVEL: "warn", PORT: values.port, WEB_CONCURRENCY: values.processes, REDIS_PREFIX: prefix },
  stdout: "ignore",
  stderr: "inherit",
  ready: httpOk(`http://${base.host}:${base.port}/v1/health`),
});

function send(method, urlPath, key, body) {
  return new Promise((resolve) => {
    const started = performance.now();
    const headers = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    if (body) headers["content-length"] = body.length;
    const req = http.request({ ...base, method, path: urlPath, headers, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.setTimeout(120_000, () => req.destroy(new Error("timeout")));
    req.on("error", (err) => resolve({ status: `error:${err.code ?? err.message}`, ms: performance.now() - started }));
    req.end(body);
  });
}

// --- load ------------------------------------------------------------------------
const lookupBodies = Array.from({ length: 1000 }, (_, i) => Buffer.from(JSON.stringify({ numbers: [`+1646${String(3_000_000 + i * 37).padStart(7, "0")}`], checks: ["number.spam"] })));
const floodBody = Buffer.from(
  JSON.stringify({ numbers: Array.from({ length: Number(values["flood-rows"]) }, (_, i) => `+1212${String(2_000_000 + ((i * 7 + 3) % 7_999_999)).padStart(7, "0")}`), checks: ["number.spam"] }),
);

/** Calls `fire(i)` `rate` times a second for `ms`, on schedule (open loop); resolves with every answer. */
async function paced(rate, ms, fire) {
  const interval = 1000 / rate;
  const start = performance.now();
  const pending = [];
  for (let i = 0; ; i += 1) {
    const due = start + i * interval;
    if (due - start >= ms) break;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(fire(i));
  }
  return Promise.all(pending);
}

const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);
function summary(results) {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const statuses = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const round = (v) => (v === null ? null : Math.round(v * 10) / 10);
  return { requests: results.length, statuses, p50_ms: round(pct(ms, 50)), p99_ms: round(pct(ms, 99)), max_ms: round(ms[ms.length - 1] ?? null) };
}

/** `n` busy loops under SCHED_IDLE (util-linux chrt) for `ms`: background CPU use with nothing of ours in it. */
function burners(n, ms) {
  const procs = Array.from({ length: n }, () => spawn("chrt", ["--idle", "0", process.execPath, "-e", `const end = Date.now() + ${ms}; while (Date.now() < end);`], { stdio: "ignore" }));
  return Promise.all(procs.map((p) => new Promise((r) => p.on("exit", r))));
}

async function segment(kind) {
  const withFlood = kind === "flood";
  if (kind === "reference") void burners(Number(values.processes), DURATION_MS);
  const [lookups, health, flood] = await Promise.all([
    paced(Number(values["lookup-rate"]), DURATION_MS, (i) => send("POST", "/v1/lookup", otherKeys[i % otherKeys.length], lookupBodies[i % lookupBodies.length])),
    paced(Number(values["health-rate"]), DURATION_MS, () => send("GET", "/v1/health")),
    withFlood ? paced(Number(values["flood-rate"]), DURATION_MS, () => send("POST", "/v1/jobs/estimate", floodKey, floodBody)) : Promise.resolve([]),
  ]);
  return { lookups, health, flood };
}

// Warm-up (JIT, key caches, connections), discarded.
await paced(50, 3_000, (i) => send("POST", "/v1/lookup", otherKeys[i % otherKeys.length], lookupBodies[i % lookupBodies.length]));
const pooled = { quiet: { lookups: [], health: [] }, flood: { lookups: [], health: [], flood: [] }, reference: { lookups: [], health: [] } };
const phases = !values["skip-reference"] ? ["quiet", "flood", "reference"] : ["quiet", "flood"];
for (let c = 0; c < Number(values.cycles); c += 1) {
  for (const phase of phases) {
    const r = await segment(phase);
    for (const [k, list] of Object.entries(r)) pooled[phase][k]?.push(...list);
    // Let queued flood work drain so the next quiet segment is quiet.
    await sleep(phase === "flood" ? 8_000 : 1_000);
  }
}
const quiet = { other_account_lookups: summary(pooled.quiet.lookups), health: summary(pooled.quiet.health) };
const flooded = { other_account_lookups: summary(pooled.flood.lookups), health: summary(pooled.flood.health), flood_estimates: summary(pooled.flood.flood) };
const reference = !values["skip-reference"] ? { other_account_lookups: summary(pooled.reference.lookups), health: summary(pooled.reference.health) } : null;

const ratio = (a, b) => (a && b ? Math.round((a / b) * 100) / 100 : null);
console.log(
  JSON.stringify(
    {
      command: `node bench/fairness.mjs ${process.argv.slice(2).join(" ")}`.trim(),
      gateway: path.relative(ROOT, values.gateway) || values.gateway,
      gateway_processes: Number(values.processes),
      segment_s: Number(values.duration),
      cycles: Number(values.cycles),
      without_flood: quiet,
      with_flood: flooded,
      ...(reference ? { reference_idle_busy_loops: reference } : {}),
      other_p99_ratio_flood_to_quiet: ratio(flooded.other_account_lookups.p99_ms, quiet.other_account_lookups.p99_ms),
      ...(reference ? { other_p99_ratio_reference_to_quiet: ratio(reference.other_account_lookups.p99_ms, quiet.other_account_lookups.p99_ms) } : {}),
      targets: {
        "other account p99 within 2x of its no-flood p99": ratio(flooded.other_account_lookups.p99_ms, quiet.other_account_lookups.p99_ms) <= 2,
        "health p99 < 50 ms under the flood": flooded.health.p99_ms < 50,
        "flooding key answered 200 or 503 only": Object.keys(flooded.flood_estimates.statuses).every((s) => s === "200" || s === "503"),
      },
    },
    null,
    2,
  ),
);
await gateway.stop();
agent.destroy();
process.exit(0);
