#!/usr/bin/env node
// One same-run report (issue 14): each benchmark with short durations, each printing its
// figures as ratios to the ceilings that bound them, and a markdown table of figure,
// ceiling, ratio, target, met? — ratios first, because the machine's speed swings
// 30-50 % between sessions, and on a shared machine within minutes.
//
//   flock /tmp/bench.lock node bench/run-all.mjs [--duration 10] [--only lookup,live,jobs,webhooks,reservations]
//        [--processes N] [--skip-live-job] [--shared-ceilings] [--out bench/results/run-all-<time>]
//
// By default every script measures the ceilings it needs just before its own figures
// (seconds apart, so a neighbour's burst lands on both). --shared-ceilings measures them
// all once at the start instead (bench/ceiling.mjs, then --ceilings FILE): shorter, but
// a figure taken three minutes after its ceiling carries the machine's drift.
//
// Runs, in order (about 5 minutes at --duration 10; 4 with --shared-ceilings):
//   ceilings      (--shared-ceilings) node bench/ceiling.mjs --duration D (http, insert, redis, parse, read)
//   lookup        a gateway of its own (WEB_CONCURRENCY = --processes), then
//                 node bench/lookup-load.mjs --duration D --connections 16 --warmup 3
//   live          node bench/live-lookups.mjs --latency 0 --numbers 1 --connections 1 (unloaded)
//                 node bench/live-lookups.mjs --latency 0 --numbers 10 --connections 32
//   jobs          node bench/jobs.mjs (50,000-row test job, estimates, downloads, live jobs)
//   webhooks      node bench/webhooks.mjs --flood 10000 --seconds 10
//   reservations  node bench/reservations.mjs --accounts 1 --concurrency 16 (flat out), and --rate 300
//
// Uses its own database (svc_bench_run_all: created and migrated when missing;
// --database-url), fresh Redis prefixes, and the checkout's .env.local secrets. The
// report goes to stdout and to OUT/report.md; every script's JSON to OUT/<name>.json.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Fleet, httpOk } from "@svc/fleet-harness";
import { ensureDotEnv } from "../scripts/lib.mjs";
import { gatewaySettings, headline, markdownTable, ROOT } from "./lib/ceilings.mjs";
import { ensureMigratedDatabase } from "./lib/setup.mjs";

const STEPS = ["lookup", "live", "jobs", "webhooks", "reservations"];
const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    only: { type: "string", default: STEPS.join(",") },
    processes: { type: "string" },
    "skip-live-job": { type: "boolean", default: false },
    "shared-ceilings": { type: "boolean", default: false },
    out: { type: "string", default: "" },
    port: { type: "string", default: "8490" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/svc_bench_run_all" },
  },
});
const D = values.duration;
const only = new Set(values.only.split(",").map((s) => s.trim()));
const processes = Number(values.processes ?? gatewaySettings().processes);
const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
const OUT = path.resolve(values.out || path.join(ROOT, "bench", "results", `run-all-${stamp}`));
mkdirSync(OUT, { recursive: true });
ensureDotEnv();
// METRICS_PORT 0: another fleet on this host (npm run up) holds the operations ports.
const env = { ...process.env, DATABASE_URL: values["database-url"], WEB_CONCURRENCY: String(processes), METRICS_PORT: "0" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (s) => process.stderr.write(`\n[run-all] ${s}\n`);
// Whatever ends this script stops what it started (the bench scripts stop theirs in turn).
const fleet = new Fleet();
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

/** Runs a bench script; its stdout is one JSON object, its stderr passes through. */
async function runScript(name, args) {
  const command = `node bench/${name}.mjs ${args.join(" ")}`.trim();
  say(command);
  const load = os.loadavg()[0];
  const run = await fleet.start({ name, script: path.join(ROOT, "bench", `${name}.mjs`), args, env, cwd: ROOT, stderr: "inherit" });
  const { code } = await run.closed;
  const out = run.output();
  let json = null;
  try {
    json = JSON.parse(out.slice(out.search(/^\{/m)));
  } catch {
    json = null;
  }
  return { command, code, json, raw: out, load };
}

async function startGateway(port) {
  const gateway = await fleet.startService("gateway", {
    env: { ...env, LOG_LEVEL: "warn", PORT: String(port), REDIS_PREFIX: `bench-all-${randomBytes(3).toString("hex")}`, METRICS_PORT: "0", DRAIN_DELAY_MS: "0" },
    cwd: process.cwd(),
    stdout: "ignore",
    stderr: "inherit",
    ready: httpOk(`http://127.0.0.1:${port}/v1/health`),
  });
  await sleep(1_000); // every cluster worker listening
  return () => gateway.stop();
}

const t0 = Date.now();
const loadStart = os.loadavg();
await ensureMigratedDatabase(values["database-url"], ROOT); // the bench database, created and migrated when missing
let ceilings = null;
let withCeilings = [];
if (values["shared-ceilings"]) {
  const ceilingsFile = path.join(OUT, "ceilings.json");
  const ceilingRun = await runScript("ceiling", ["--duration", D, "--processes", String(processes), "--out", ceilingsFile]);
  if (!ceilingRun.json) throw new Error("bench/ceiling.mjs failed");
  ceilings = ceilingRun.json;
  withCeilings = ["--ceilings", ceilingsFile];
}
const runs = [];
if (only.has("lookup")) {
  const stop = await startGateway(Number(values.port));
  try {
    runs.push(await runScript("lookup-load", ["--url", `http://127.0.0.1:${values.port}`, "--duration", D, "--connections", "16", "--warmup", "3", "--processes", String(processes), ...withCeilings]));
  } finally {
    await stop();
  }
}
if (only.has("live")) {
  runs.push(await runScript("live-lookups", ["--latency", "0", "--workers", "1", "--numbers", "1", "--connections", "1", "--duration", D, "--warmup", "3", "--port", String(Number(values.port) + 10), ...withCeilings]));
  runs.push(await runScript("live-lookups", ["--latency", "0", "--workers", "1", "--numbers", "10", "--connections", "32", "--duration", D, "--warmup", "3", "--port", String(Number(values.port) + 10), ...withCeilings]));
}
if (only.has("jobs")) runs.push(await runScript("jobs", ["--port", String(Number(values.port) + 20), ...(values["skip-live-job"] ? ["--skip-live"] : []), ...withCeilings]));
if (only.has("webhooks")) runs.push(await runScript("webhooks", ["--flood", "10000", "--seconds", D, "--rate", "500", ...withCeilings]));
if (only.has("reservations")) {
  runs.push(await runScript("reservations", ["--accounts", "1", "--concurrency", "16", "--duration", String(Math.min(8, Number(D))), ...withCeilings]));
  runs.push(await runScript("reservations", ["--accounts", "1", "--concurrency", "16", "--duration", String(Math.min(8, Number(D))), "--rate", "300", ...withCeilings]));
}

// --- the report ----------------------------------------------------------------
const lines = [];
const commit = ceilings?.commit ?? runs.find((r) => r.json?.ceilings)?.json.ceilings.commit ?? spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
lines.push(`# Same-run report (${new Date(t0).toISOString()}, commit ${commit})`, "");
lines.push(`Command: \`flock /tmp/bench.lock node bench/run-all.mjs ${process.argv.slice(2).join(" ")}\``.replace(/ `$/, "`"), "");
lines.push(`Machine: ${os.availableParallelism()} CPUs, Node ${process.version}; load average at the start ${loadStart.map((x) => x.toFixed(2)).join(" ")}, at the end ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}; ${Math.round((Date.now() - t0) / 1000)} s in all.`, "");
lines.push("## Ceilings", "");
if (ceilings) {
  lines.push("Measured once, at the start (--shared-ceilings).", "", "| Ceiling | Measured | What |", "|---|---|---|");
  for (const name of ["http", "insert", "redis", "parse", "read", "pgbench"]) if (ceilings[name]) lines.push(`| ${name} | ${headline(ceilings, name)} | ${ceilings[name].what ?? ""} |`);
} else {
  lines.push("Each measured by the script just before its figures ([n] = the run below).", "", "| Before | Ceiling | Measured |", "|---|---|---|");
  runs.forEach((run, i) => {
    const c = run.json?.ceilings;
    if (c) for (const name of ["http", "insert", "redis", "parse", "read"]) if (c[name]) lines.push(`| [${i + 1}] | ${name} | ${headline(c, name)} |`);
  });
}
lines.push("", "## Figures as ratios to the ceilings above", "");
const all = [];
runs.forEach((run, i) => {
  const tag = `[${i + 1}]`;
  if (run.code !== 0 || !run.json) all.push({ figure: `**${tag} failed (exit ${run.code})**`, value: NaN, ratio: null, target: "", met: false });
  for (const r of run.json?.ratios ?? []) all.push({ ...r, figure: `${r.figure} ${tag}` });
});
lines.push(markdownTable(all), "");
lines.push(...runs.map((run, i) => `${i + 1}. \`${run.command.replace(/ --ceilings \S+/, " --ceilings <ceilings.json>")}\` (load average ${run.load.toFixed(1)} at its start)`), "");
const missed = all.filter((r) => r.met === false);
lines.push(missed.length === 0 ? "Every target with a verdict was met." : `Not met: ${missed.map((r) => r.figure).join("; ")}.`, "");
const report = lines.join("\n");
writeFileSync(path.join(OUT, "report.md"), `${report}\n`);
for (const run of runs) writeFileSync(path.join(OUT, `${run.command.split(" ")[1].replace(/^bench\/|\.mjs$/g, "")}-${runs.indexOf(run)}.json`), `${JSON.stringify(run.json ?? { raw: run.raw }, null, 2)}\n`);
process.stdout.write(`${report}\n`);
say(`report: ${path.relative(ROOT, path.join(OUT, "report.md"))}`);
