#!/usr/bin/env node
// A 50,000-row job created, watched and downloaded end to end, two ways in the same
// run against a fleet this script starts (fresh Redis prefix, the local Postgres):
//
//   cli: three `svc` commands, as a shell script would run them:
//          svc --json jobs create list.txt --checks C      (the id from its JSON)
//          svc --json jobs watch <id> --no-progress
//          svc jobs download <id> -o out.csv
//   raw: one Node process doing the same with `fetch`: the same multipart upload of
//        the same file, GET /v1/jobs/<id>?wait=30 until finished, the CSV download
//        streamed to a file.
//
// Both are timed from spawning the first process to the last one's exit, so each
// pays its Node start-ups (the CLI three, the script one). Rounds alternate which
// flow goes first. Every job gets numbers of its own (no answer-cache hits).
// `test` mode needs only the gateway (a test job is complete in its creation
// answer); `live` adds the vendor simulator at 0 ms, one check-worker and the ledger.
//
//   node bench/cli-job.mjs [--rows 50000] [--rounds 5] [--mode test|live|both] [--port 8292]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, openAsBlob, readFileSync, statSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { Fleet, httpOk, seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv, ROOT } from "../scripts/lib.mjs";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "50000" },
    rounds: { type: "string", default: "5" },
    mode: { type: "string", default: "both" },
    port: { type: "string", default: "8292" },
    // Internal: this file run as the raw-HTTP flow's own process.
    "raw-flow": { type: "boolean", default: false },
    base: { type: "string" },
    file: { type: "string" },
    checks: { type: "string" },
    out: { type: "string" },
  },
});

if (values["raw-flow"]) {
  await rawFlow();
  process.exit(0);
}

/** The flow with nothing but fetch: what a script without the SDK or the CLI would do. */
async function rawFlow() {
  const key = process.env.SVC_API_KEY;
  const auth = { authorization: `Bearer ${key}` };
  const form = new FormData();
  form.append("file", await openAsBlob(values.file, { type: "text/csv" }), path.basename(values.file));
  form.append("checks", values.checks);
  let res = await fetch(`${values.base}/v1/jobs`, { method: "POST", headers: { ...auth, "idempotency-key": randomBytes(16).toString("hex") }, body: form });
  let job = await res.json();
  if (res.status !== 201) throw new Error(`create: HTTP ${res.status} ${JSON.stringify(job)}`);
  while (!job.finished_at) {
    res = await fetch(`${values.base}/v1/jobs/${job.id}?wait=30`, { headers: auth });
    job = await res.json();
    if (res.status !== 200) throw new Error(`watch: HTTP ${res.status}`);
  }
  res = await fetch(`${values.base}/v1/jobs/${job.id}/download?format=csv`, { headers: { ...auth, accept: "text/csv" } });
  if (res.status !== 200) throw new Error(`download: HTTP ${res.status}`);
  await pipeline(Readable.fromWeb(res.body), createWriteStream(values.out));
  process.stdout.write(JSON.stringify({ id: job.id, status: job.status }));
}

ensureDotEnv();

const N = Number(values.rows);
const ROUNDS = Number(values.rounds);
const base = `http://127.0.0.1:${values.port}`;
const SVC = path.join(ROOT, "packages/cli/bin/svc.js");
const SELF = path.join(ROOT, "bench/cli-job.mjs");
const dir = mkdtempSync(path.join(tmpdir(), "bench-cli-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Whatever ends this script stops what it started; a service that dies on its own ends the run.
const fleet = new Fleet({ failFast: true });
/** A built program in `env`, its log (warn and above) on our stderr; the gateway is up once it answers /v1/health. */
const start = (name, env) =>
  fleet.startService(name, { env, stdout: "ignore", stderr: "inherit", ...(name === "gateway" ? { ready: httpOk(`${base}/v1/health`), readyTimeoutMs: 30_000 } : { ready: null }) });

/** Runs a process to its end; resolves with its stdout and the wall time from spawn to exit. */
function timed(args, env) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? resolve({ out, ms: performance.now() - t0 }) : reject(new Error(`${args.slice(1).join(" ")}: exit ${code}\n${err}`))));
  });
}

const keyFor = async (mode) =>
  (await seedAccount(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode, name: `bench-cli-${mode}`, balanceMicros: 1_000_000_000_000n })).keys[0];

// Distinct US numbers 7 apart; each list its own range (never an answer-cache hit, never 20 consecutive).
let lists = 0;
function listFile() {
  const salt = lists++;
  const file = path.join(dir, `list-${salt}.txt`);
  writeFileSync(file, `${Array.from({ length: N }, (_, i) => `+1212${String(2_000_000 + salt * 400_000 + i * 7).padStart(7, "0")}`).join("\n")}\n`);
  return file;
}

const lineCount = (file) => readFileSync(file, "utf8").trimEnd().split("\n").length;

async function cliFlow(env, checks) {
  const file = listFile();
  const out = path.join(dir, `cli-${lists}.csv`);
  const t0 = performance.now();
  const created = await timed([SVC, "--json", "jobs", "create", file, "--checks", checks], env);
  const id = JSON.parse(created.out).id;
  const watched = await timed([SVC, "--json", "jobs", "watch", id, "--no-progress"], env);
  if (JSON.parse(watched.out).status !== "completed") throw new Error(`cli: ${id} not completed`);
  const downloaded = await timed([SVC, "jobs", "download", id, "-o", out], env);
  const ms = performance.now() - t0;
  if (lineCount(out) !== N + 1) throw new Error(`cli: ${out} has ${lineCount(out)} lines`);
  return { ms, steps: [created.ms, watched.ms, downloaded.ms], bytes: statSync(out).size };
}

async function rawFlowTimed(env, checks) {
  const file = listFile();
  const out = path.join(dir, `raw-${lists}.csv`);
  const run = await timed([SELF, "--raw-flow", "--base", base, "--file", file, "--checks", checks, "--out", out], env);
  if (JSON.parse(run.out).status !== "completed") throw new Error("raw: not completed");
  if (lineCount(out) !== N + 1) throw new Error(`raw: ${out} has ${lineCount(out)} lines`);
  return { ms: run.ms, bytes: statSync(out).size };
}

async function measure(mode, env, checks) {
  const key = await keyFor(mode);
  const childEnv = { PATH: process.env.PATH, SVC_API_KEY: key, SVC_BASE_URL: base };
  await cliFlow(childEnv, checks); // warm-up: the gateway's first job, JIT, caches
  await rawFlowTimed(childEnv, checks);
  const cli = [];
  const raw = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    if (r % 2 === 0) {
      cli.push(await cliFlow(childEnv, checks));
      raw.push(await rawFlowTimed(childEnv, checks));
    } else {
      raw.push(await rawFlowTimed(childEnv, checks));
      cli.push(await cliFlow(childEnv, checks));
    }
    process.stderr.write(`${mode} round ${r + 1}: cli ${Math.round(cli.at(-1).ms)} ms, raw ${Math.round(raw.at(-1).ms)} ms\n`);
  }
  const cliMs = median(cli.map((x) => x.ms));
  const rawMs = median(raw.map((x) => x.ms));
  return {
    mode,
    checks,
    rows: N,
    rounds: ROUNDS,
    cli_ms: cli.map((x) => Math.round(x.ms)),
    raw_ms: raw.map((x) => Math.round(x.ms)),
    cli_median_ms: Math.round(cliMs),
    raw_median_ms: Math.round(rawMs),
    cli_over_raw: Math.round((cliMs / rawMs) * 1000) / 1000,
    cli_steps_median_ms: { create: Math.round(median(cli.map((x) => x.steps[0]))), watch: Math.round(median(cli.map((x) => x.steps[1]))), download: Math.round(median(cli.map((x) => x.steps[2]))) },
    csv_bytes: cli[0].bytes,
  };
}

const results = { command: `node bench/cli-job.mjs ${process.argv.slice(2).join(" ")}`.trim(), node: process.version };
// What a process start costs here, for reading the figures.
const starts = [];
for (let i = 0; i < 5; i += 1) starts.push((await timed([SVC, "--version"], { PATH: process.env.PATH })).ms);
results.svc_version_process_ms = Math.round(median(starts));
// METRICS_PORT 0: a fleet of `npm run up` on this machine would hold the default operations ports.
const baseEnv = { ...process.env, LOG_LEVEL: "warn", PORT: values.port, WEB_CONCURRENCY: "1", METRICS_PORT: "0" };
if (values.mode === "test" || values.mode === "both") {
  const env = { ...baseEnv, REDIS_PREFIX: `bench-cli-${randomBytes(3).toString("hex")}` };
  const starting = start("gateway", env);
  await sleep(2_500); // the pause the figures were always taken after
  await starting;
  results.test = await measure("test", env, "spam");
  await fleet.stop();
}
if (values.mode === "live" || values.mode === "both") {
  const simPort = Number(values.port) + 1;
  const env = { ...baseEnv, REDIS_PREFIX: `bench-cli-${randomBytes(3).toString("hex")}`, VENDOR_PRIMARY_URL: `http://127.0.0.1:${simPort}`, VENDOR_PRIMARY_KEY: "sim-key" };
  const starting = [
    start("vendor-simulator", { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: "0" }),
    start("gateway", env),
    start("billing-ledger", env),
    start("check-worker", env),
  ];
  await sleep(3_500); // as above
  await Promise.all(starting);
  results.live = await measure("live", env, "whatsapp");
  await fleet.stop();
}
console.log(JSON.stringify(results, null, 2));
