#!/usr/bin/env node
// Test mode against its ceilings (issue 14, item 3), in one run, with the build before
// a change beside the build after it, interleaved in cycles (the order rotating),
// because this machine swings 30-50 % between minutes:
//
//   insert ceiling   bench/lib/ceilings.mjs's: single-row JSONB inserts through `pg` with the
//                    gateway's pool settings (--processes processes x DATABASE_POOL_SIZE
//                    connections, as many concurrent inserts each, a named prepared statement)
//   lookups          test-mode POST /v1/lookup (one number, number.spam, rotating over
//                    400 test keys as bench/lookup-load.mjs) against a gateway of each
//                    build (--processes, WEB_CONCURRENCY); req/s over the insert ceiling
//   parse ceiling    bench/lib/ceilings.mjs's: libphonenumber-js/max parsing (+ isValid) of
//                    the same 50,000 numbers on the gateway's intake thread count
//                    (INTAKE_THREADS), warm; also the same on a thread under SCHED_IDLE
//   test job         POST /v1/jobs with those 50,000 numbers (number.spam, test key) on a
//                    fresh one-process gateway of each build (as bench/jobs.mjs): the
//                    first job (cold JIT) and a second one (warm); ms over the parse ceiling
//
// Each gateway: fresh processes, its own Redis prefix, log level warn. Besides req/s
// and p99 the lookup runs report the gateway's CPU per 1,000 requests (user + system
// of its processes, /proc), which a busy machine disturbs less than throughput.
//
//   git worktree add /tmp/base <commit>      # node_modules: a hard-linked copy (cp -al) of this
//                                            # checkout's, then npx turbo run build there
//   flock /tmp/bench.lock node bench/test-mode.mjs --base /tmp/base [--current .] [--cycles 3]
//        [--duration 10] [--warmup 3] [--connections 16] [--processes 2] [--rows 50000] [--skip-lookups] [--skip-jobs]
//        [--cpu-prof DIR]   (node --cpu-prof of every gateway process and thread, under DIR/<build>/)
//        [--express-ceiling]   (also bench/lib/ceilings.mjs's express ceiling each cycle: a minimal Express
//                               cluster storing one group-committed row per request; lookups over it)
//        [--database-per-build]   (each build on its own database, <database>_<build>, migrated with
//                                  that build's own migrations: for a change to the schema)
//
// Needs the local Postgres and Redis; uses its own database (created and migrated when missing).
import { randomBytes } from "node:crypto";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Fleet, GATEWAY_NODE_FLAGS, httpOk, seedAccount } from "@svc/fleet-harness";
import { jobNumbers, measureExpressInsert, measureInsert, measureParse } from "./lib/ceilings.mjs";
import { cpuSeconds, ensureMigratedDatabase } from "./lib/setup.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    current: { type: "string", default: ROOT },
    cycles: { type: "string", default: "3" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    processes: { type: "string", default: "2" },
    "pool-size": { type: "string", default: "10" },
    "intake-threads": { type: "string", default: "1" },
    keys: { type: "string", default: "400" },
    rows: { type: "string", default: "50000" },
    port: { type: "string", default: "8480" },
    "skip-lookups": { type: "boolean", default: false },
    "skip-jobs": { type: "boolean", default: false },
    "database-per-build": { type: "boolean", default: false },
    "express-ceiling": { type: "boolean", default: false },
    // Profiles of every gateway process and thread (node --cpu-prof) under DIR/<build>/.
    "cpu-prof": { type: "string" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/svc_bench_test_mode" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
  },
});

const DATABASE_URL = values["database-url"];
const POOL_SIZE = Number(values["pool-size"]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round3 = (x) => Math.round(x * 1000) / 1000;

if (!values.base) throw new Error("--base names the worktree of the build before the change");
const BUILDS = { base: values.base, current: values.current };
const PORT = Number(values.port);

/** The database a build's gateway uses (and the worktree whose migrations shape it). */
const databaseOf = (build) => (values["database-per-build"] ? Object.assign(new URL(DATABASE_URL), { pathname: `${new URL(DATABASE_URL).pathname}_${build}` }).toString() : DATABASE_URL);
const DATABASES = values["database-per-build"] ? ["base", "current"].map((b) => ({ url: databaseOf(b), root: b === "base" ? values.base : values.current })) : [{ url: DATABASE_URL, root: ROOT }];


const secrets = {
  KEY_HASH_SECRET: randomBytes(32).toString("hex"),
  CACHE_HASH_SECRET: randomBytes(32).toString("hex"),
  DATA_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  FLEET_MESSAGE_KEY: randomBytes(32).toString("base64"),
};

async function makeKeys(n, name) {
  // The same keys in every database used (one per build with --database-per-build).
  let keys;
  for (const { url } of DATABASES) ({ keys } = await seedAccount(url, { keyHashSecret: secrets.KEY_HASH_SECRET, mode: "test", ...(keys ? { keys } : { count: n }), name, balanceMicros: 0n }));
  return keys;
}

// Whatever ends this script stops the gateway it runs; a gateway dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

async function startGateway(build, processes) {
  if (await fetch(`http://127.0.0.1:${PORT}/v1/health`).then(() => true, () => false)) throw new Error(`something already answers on port ${PORT}`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: "warn",
    PORT: String(PORT),
    WEB_CONCURRENCY: String(processes),
    DATABASE_URL: databaseOf(build),
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    INTAKE_THREADS: values["intake-threads"],
    REDIS_URL: values["redis-url"],
    REDIS_PREFIX: `bench-tm-${randomBytes(3).toString("hex")}`,
    SHUTDOWN_TIMEOUT_MS: "10000",
    DRAIN_DELAY_MS: "0",
    METRICS_PORT: "0",
    ...secrets,
  };
  // The gateway's own node flags, as its launchers pass them (scripts/fleet.mjs, docker/, k8s/).
  const prof = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(values["cpu-prof"], build)}`] : [];
  const gateway = await fleet.startService("gateway", {
    root: BUILDS[build],
    cwd: process.cwd(),
    nodeFlags: [...GATEWAY_NODE_FLAGS, ...prof],
    env,
    stdout: "ignore",
    stderr: "pipe",
    ready: httpOk(`http://127.0.0.1:${PORT}/v1/health`),
  });
  await sleep(1_000); // every cluster worker listening
  return { cpu: () => cpuSeconds(gateway.pid), stop: () => gateway.stop() };
}

/** The shared definition (bench/lib/ceilings.mjs): --processes x pg.Pool(DATABASE_POOL_SIZE), as many concurrent single-row JSONB inserts each. */
async function insertCeiling() {
  const c = await measureInsert({ processes: Number(values.processes), poolSize: POOL_SIZE, duration: Number(values.duration), warmup: 2, roundTrips: 200 });
  return { per_s: c.inserts_per_s, p50_ms: c.latency_ms.p50, p99_ms: c.latency_ms.p99, clients: c.clients };
}

async function lookupRun(build, keys) {
  const { default: autocannon } = await import("autocannon");
  const gateway = await startGateway(build, Number(values.processes));
  let n = 0;
  const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
  const load = (duration) =>
    autocannon({
      url: `http://127.0.0.1:${PORT}/v1/lookup`,
      connections: Number(values.connections),
      duration,
      requests: [{ method: "POST", setupRequest: (req) => ({ ...req, body, headers: { "content-type": "application/json", authorization: `Bearer ${keys[n++ % keys.length]}` } }) }],
    });
  try {
    if (Number(values.warmup) > 0) await load(Number(values.warmup));
    const cpu0 = gateway.cpu();
    const result = await load(Number(values.duration));
    const cpu = gateway.cpu() - cpu0;
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${build}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { req_per_s: Math.round(result.requests.average), p50_ms: result.latency.p50, p99_ms: result.latency.p99, cpu_ms_per_1k: Math.round((cpu * 1e7) / result.requests.total) / 10 };
  } finally {
    await gateway.stop();
  }
}

const ROWS = Number(values.rows);
// The list bench/jobs.mjs sends (distinct US numbers, 7 apart).
const LIST = jobNumbers(ROWS);

/** The shared definition (bench/lib/ceilings.mjs): libphonenumber-js/max parse + isValid of the same list on one thread, warm; also under SCHED_IDLE. */
async function parseCeiling() {
  const c = await measureParse({ numbers: ROWS, splitThreads: Number(values["intake-threads"]), parallelThreads: 1, rounds: 3 });
  return { warm_ms: Math.round(c.split_ms), cold_ms: Math.round(c.one_thread_cold_ms), sched_idle_ms: Math.round(c.one_thread_sched_idle_ms), sched_idle: c.sched_idle };
}

async function jobRun(build, key) {
  const gateway = await startGateway(build, 1);
  const post = async () => {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${PORT}/v1/jobs`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ numbers: LIST, checks: ["number.spam"] }) });
    const body = await res.json();
    const ms = Math.round(performance.now() - t);
    if (res.status !== 201 || body.status !== "completed") throw new Error(`${build} job: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return ms;
  };
  try {
    const cold = await post();
    const warm = await post();
    return { cold_ms: cold, warm_ms: warm };
  } finally {
    await gateway.stop();
  }
}

for (const { url, root } of DATABASES) await ensureMigratedDatabase(url, root);
const keys = values["skip-lookups"] ? [] : await makeKeys(Number(values.keys), "bench-test-mode");
const [jobKey] = values["skip-jobs"] ? [] : await makeKeys(1, "bench-test-mode-jobs");
const order = Object.keys(BUILDS);
const cycles = [];
for (let c = 0; c < Number(values.cycles); c += 1) {
  const cycle = {};
  const builds = order.map((_, i) => order[(i + c) % order.length]);
  if (!values["skip-lookups"]) {
    cycle.insert_ceiling = await insertCeiling();
    if (values["express-ceiling"]) {
      const e = await measureExpressInsert({ processes: Number(values.processes), poolSize: POOL_SIZE, connections: Number(values.connections), duration: Number(values.duration), warmup: Number(values.warmup) });
      cycle.express_ceiling = { per_s: e.req_per_s, p99_ms: e.latency_ms.p99, over_insert_ceiling: round3(e.req_per_s / cycle.insert_ceiling.per_s) };
    }
    cycle.lookups = {};
    for (const b of builds) {
      const r = await lookupRun(b, keys);
      cycle.lookups[b] = { ...r, over_insert_ceiling: round3(r.req_per_s / cycle.insert_ceiling.per_s), ...(cycle.express_ceiling ? { over_express_ceiling: round3(r.req_per_s / cycle.express_ceiling.per_s) } : {}) };
    }
    cycle.lookups.current_over_base = {
      req_per_s: round3(cycle.lookups.current.req_per_s / cycle.lookups.base.req_per_s),
      p99: round3(cycle.lookups.current.p99_ms / cycle.lookups.base.p99_ms),
      cpu_per_request: round3(cycle.lookups.current.cpu_ms_per_1k / cycle.lookups.base.cpu_ms_per_1k),
    };
  }
  if (!values["skip-jobs"]) {
    cycle.parse_ceiling = await parseCeiling();
    cycle.jobs = {};
    for (const b of builds) {
      const r = await jobRun(b, jobKey);
      cycle.jobs[b] = { ...r, cold_over_parse: round3(r.cold_ms / cycle.parse_ceiling.warm_ms), warm_over_parse: round3(r.warm_ms / cycle.parse_ceiling.warm_ms), warm_over_parse_sched_idle: round3(r.warm_ms / cycle.parse_ceiling.sched_idle_ms) };
    }
    cycle.jobs.current_over_base = { cold: round3(cycle.jobs.current.cold_ms / cycle.jobs.base.cold_ms), warm: round3(cycle.jobs.current.warm_ms / cycle.jobs.base.warm_ms) };
  }
  cycles.push(cycle);
  process.stderr.write(`cycle ${c + 1}: ${JSON.stringify(cycle)}\n`);
}

const med = (pick) => {
  const xs = cycles.map(pick).filter((x) => typeof x === "number");
  return xs.length ? round3(median(xs)) : null;
};
const summary = { command: `node bench/test-mode.mjs ${process.argv.slice(2).join(" ")}`.trim(), node: process.version, builds: BUILDS, cycles, median: {} };
if (!values["skip-lookups"]) {
  summary.median.lookups = {
    insert_ceiling_per_s: med((c) => c.insert_ceiling.per_s),
    express_ceiling_per_s: med((c) => c.express_ceiling?.per_s),
    express_ceiling_over_insert_ceiling: med((c) => c.express_ceiling?.over_insert_ceiling),
    ...Object.fromEntries(
      order.map((b) => [b, { req_per_s: med((c) => c.lookups[b].req_per_s), p99_ms: med((c) => c.lookups[b].p99_ms), cpu_ms_per_1k: med((c) => c.lookups[b].cpu_ms_per_1k), over_insert_ceiling: med((c) => c.lookups[b].over_insert_ceiling), over_express_ceiling: med((c) => c.lookups[b].over_express_ceiling) }]),
    ),
    current_over_base: { req_per_s: med((c) => c.lookups.current_over_base.req_per_s), p99: med((c) => c.lookups.current_over_base.p99), cpu_per_request: med((c) => c.lookups.current_over_base.cpu_per_request) },
  };
}
if (!values["skip-jobs"]) {
  summary.median.jobs = {
    parse_ceiling_warm_ms: med((c) => c.parse_ceiling.warm_ms),
    parse_ceiling_cold_ms: med((c) => c.parse_ceiling.cold_ms),
    parse_ceiling_sched_idle_ms: med((c) => c.parse_ceiling.sched_idle_ms),
    ...Object.fromEntries(order.map((b) => [b, { cold_ms: med((c) => c.jobs[b].cold_ms), warm_ms: med((c) => c.jobs[b].warm_ms), cold_over_parse: med((c) => c.jobs[b].cold_over_parse), warm_over_parse: med((c) => c.jobs[b].warm_over_parse), warm_over_parse_sched_idle: med((c) => c.jobs[b].warm_over_parse_sched_idle) }])),
    current_over_base: { cold: med((c) => c.jobs.current_over_base.cold), warm: med((c) => c.jobs.current_over_base.warm) },
  };
}
console.log(JSON.stringify(summary, null, 2));
