// The machine's ceilings that bound each benchmark figure (issue 14), measured in the
// same run as the figure, because this machine's speed swings 30-50 % between and
// within sessions: a figure is reported as its ratio to the ceiling that bounds it.
//
//   http    a bare node:http cluster with the gateway's process count (WEB_CONCURRENCY)
//           answering a small JSON body to autocannon (16 connections): req/s, and the
//           unloaded round trip (one request at a time, keep-alive) p50/p99.
//           Bounds: test-mode lookups/s, webhook deliveries/s; the round trip bounds
//           a live lookup's latency.
//   insert  single-row JSONB inserts into a scratch table of a scratch database through
//           `pg` with the gateway's pool settings (DATABASE_POOL_SIZE, default 10; as
//           many concurrent inserts as the pool has connections), in as many processes
//           as the gateway has: inserts/s; and one client's sequential round trips
//           (SELECT 1, one insert) p50/p99. Bounds: test-mode lookups/s (one insert
//           each), reservations/s, live checks/s (answers written).
//   redis   a Redis round trip through ioredis: sequential PING and SET p50/p99, and
//           pipelined SETs per second. Bounds: a live lookup's latency (queue, notices).
//   parse   libphonenumber-js/max (packages/domain's import) parsing and validating
//           50,000 numbers (jobs.mjs's list): on one thread (cold and warm), split over
//           the gateway's intake threads for one request (INTAKE_THREADS), and in
//           parallel on every intake thread of the host (WEB_CONCURRENCY x
//           INTAKE_THREADS); and on one thread under SCHED_IDLE, as the intake threads
//           run (neighbours' load shows there). Bounds: a 50,000-row test job, estimates.
//   read    streaming 50,000 rows (~430 bytes each, a jsonb column) from a scratch table
//           through pg-query-stream in batches of 1,000, as the download does.
//           Bounds: downloads.
//   express (optional) the least an Express gateway does per test lookup: a cluster with the
//           gateway's process count, express.json(), one row per request group-committed into
//           the scratch table as the gateway's test lookups are (pg.Pool with its pool size),
//           answered with a small JSON body; autocannon with 16 connections. Bounds: test-mode
//           lookups/s under this project's fixed shape (an Express gateway, one insert each).
//   pgbench (optional) pgbench with 16 clients inserting the same row, for comparison
//           with the figure (not the gateway's pool shape).
//
// Used by bench/ceiling.mjs (all of them, JSON and a table), bench/run-all.mjs (one
// report) and every bench script (the ceiling its figure needs, measured at the start
// of its run, or read with --ceilings FILE from a bench/ceiling.mjs run just before).
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { Agent, request } from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import autocannon from "autocannon";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const require = createRequire(import.meta.url);
const pg = require("pg");
const CHILD = path.join(ROOT, "bench", "lib", "ceiling-child.mjs");
const PARSE_THREAD = path.join(ROOT, "bench", "lib", "parse-thread.mjs");
const DOMAIN_PACKAGE = path.join(ROOT, "packages", "domain", "package.json");

export const ALL = ["http", "insert", "redis", "parse", "read"];
export const DEFAULT_CEILING_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/svc_bench_ceiling";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 0) => Math.round(x * 10 ** d) / 10 ** d;
/** p-th percentile of an ascending array. */
export const pct = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const summary = (xs, d = 3) => {
  const s = Float64Array.from(xs).sort();
  return { p50: round(pct(s, 50), d), p99: round(pct(s, 99), d) };
};

/**
 * The gateway's settings that shape the ceilings, from the environment or else the
 * defaults: WEB_CONCURRENCY as `npm run up` sets it (one process per core, at most 4;
 * scripts/fleet.mjs), DATABASE_POOL_SIZE and INTAKE_THREADS from the gateway's config
 * schema (services/gateway/src/config.ts, read from its build so they stay in step).
 */
export function gatewaySettings(env = process.env) {
  let schema = null;
  try {
    schema = require(path.join(ROOT, "services/gateway/dist/config.js")).GatewayEnv.properties;
  } catch {
    // not built: the documented defaults
  }
  const num = (name, fallback) => Number(env[name] ?? schema?.[name]?.default ?? fallback);
  return {
    processes: Number(env.WEB_CONCURRENCY ?? Math.min(4, os.availableParallelism())),
    poolSize: num("DATABASE_POOL_SIZE", 10),
    intakeThreads: num("INTAKE_THREADS", 1),
  };
}

/** Distinct US numbers, 7 apart: the list bench/jobs.mjs sends. */
export const jobNumbers = (n, salt = 3) => Array.from({ length: n }, (_, i) => `+1212${String(2_000_000 + ((i * 7 + salt) % 7_999_999)).padStart(7, "0")}`);

// --- http --------------------------------------------------------------------

async function startBareHttp(processes, mode = "http", env = {}) {
  const child = spawn(process.execPath, [CHILD, mode], { env: { ...process.env, ...env, CEILING_PROCESSES: String(processes) }, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /\{"port":(\d+)\}/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`bare http server exited ${code}`)));
  });
  return { port, stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.on("exit", r), child.kill("SIGTERM")))) };
}

/** Sequential keep-alive round trips (one request at a time): p50/p99 in ms. */
async function httpRoundTrips(port, count, body) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const one = () =>
    new Promise((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path: "/", method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i += 1) await one();
  const ms = [];
  for (let i = 0; i < count; i += 1) {
    const t = performance.now();
    await one();
    ms.push(performance.now() - t);
  }
  agent.destroy();
  return summary(ms);
}

export async function measureHttp({ processes, connections = 16, duration = 10, warmup = 2, roundTrips = 2000 } = {}) {
  const server = await startBareHttp(processes);
  const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
  const load = (seconds) => autocannon({ url: `http://127.0.0.1:${server.port}/`, connections, duration: seconds, method: "POST", headers: { "content-type": "application/json" }, body });
  try {
    if (warmup > 0) await load(warmup);
    const result = await load(duration);
    const rtt = await httpRoundTrips(server.port, roundTrips, body);
    return {
      what: `bare node:http, ${processes} process(es), POST of a small JSON body answered with a small JSON body; autocannon ${connections} connections ${duration} s`,
      processes,
      connections,
      duration_s: duration,
      req_per_s: Math.round(result.requests.average),
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
      non_2xx: result.non2xx,
      round_trip_ms: rtt,
    };
  } finally {
    await server.stop();
  }
}

// --- the scratch database ----------------------------------------------------

/** Creates the scratch database and its tables when missing (nothing of the product's schema). */
export async function ensureScratchDatabase(databaseUrl = DEFAULT_CEILING_DATABASE_URL) {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: "/postgres" }).toString() });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount === 0) await admin.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`).catch((err) => (err.code === "42P04" ? undefined : Promise.reject(err)));
  } finally {
    await admin.end();
  }
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(`CREATE TABLE IF NOT EXISTS ceiling_insert (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now(), body jsonb NOT NULL)`);
    await db.query(`CREATE TABLE IF NOT EXISTS ceiling_rows (job_id text NOT NULL, row_no int NOT NULL, kind text NOT NULL, input_masked text NOT NULL, e164 text, country text, number_status text, checks jsonb NOT NULL, PRIMARY KEY (job_id, row_no))`);
  } finally {
    await db.end();
  }
}

// --- insert ------------------------------------------------------------------

export async function measureInsert({ processes, poolSize, duration = 10, warmup = 2, databaseUrl = DEFAULT_CEILING_DATABASE_URL, roundTrips = 1000 } = {}) {
  await ensureScratchDatabase(databaseUrl);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query("TRUNCATE ceiling_insert");
  await db.query("CHECKPOINT").catch(() => undefined); // needs superuser; the local postgres is
  const startAt = Date.now() + 1_500; // every process connected and waiting
  const env = { ...process.env, CEILING_DATABASE_URL: databaseUrl, CEILING_POOL_SIZE: String(poolSize), START_AT: String(startAt), WARMUP_MS: String(warmup * 1000), DURATION_MS: String(duration * 1000) };
  const runs = await Promise.all(
    Array.from({ length: processes }, () => {
      const child = spawn(process.execPath, [CHILD, "insert"], { env, stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      return new Promise((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`insert ceiling process exited ${code}`)))));
    }),
  );
  const count = runs.reduce((a, r) => a + r.count, 0);
  const latencies = runs.flatMap((r) => r.latencies);
  // One client's sequential round trips: the floor under any statement on a request's path.
  const select = [];
  const insert = [];
  const body = JSON.stringify({ number: "+12125550123", checks: ["number.spam"] });
  for (let i = 0; i < 100; i += 1) await db.query({ name: "s1", text: "SELECT 1" });
  for (let i = 0; i < roundTrips; i += 1) {
    let t = performance.now();
    await db.query({ name: "s1", text: "SELECT 1" });
    select.push(performance.now() - t);
    t = performance.now();
    await db.query({ name: "i1", text: "INSERT INTO ceiling_insert (body) VALUES ($1::jsonb)", values: [body] });
    insert.push(performance.now() - t);
  }
  await db.query("TRUNCATE ceiling_insert");
  await db.end();
  return {
    what: `single-row JSONB INSERT (named prepared statement, autocommit) into a scratch table; ${processes} process(es) x pg.Pool max ${poolSize}, ${poolSize} concurrent each; ${duration} s`,
    processes,
    pool_size: poolSize,
    clients: processes * poolSize,
    duration_s: duration,
    inserts_per_s: Math.round(count / duration),
    latency_ms: summary(latencies),
    round_trip_ms: { select_1: summary(select), insert: summary(insert) },
  };
}

/** A minimal Express cluster that stores one row per request (group-committed) and answers: req/s. */
export async function measureExpressInsert({ processes, poolSize, connections = 16, duration = 10, warmup = 2, databaseUrl = DEFAULT_CEILING_DATABASE_URL } = {}) {
  await ensureScratchDatabase(databaseUrl);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  await db.query("TRUNCATE ceiling_insert");
  const server = await startBareHttp(processes, "express", { CEILING_DATABASE_URL: databaseUrl, CEILING_POOL_SIZE: String(poolSize) });
  const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
  const load = (seconds) => autocannon({ url: `http://127.0.0.1:${server.port}/`, connections, duration: seconds, method: "POST", headers: { "content-type": "application/json" }, body });
  try {
    if (warmup > 0) await load(warmup);
    const result = await load(duration);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM ceiling_insert");
    return {
      what: `Express (express.json()) cluster, ${processes} process(es), one row per request group-committed (pg.Pool max ${poolSize}, 2 batches of <= 64 in flight); autocannon ${connections} connections ${duration} s`,
      processes,
      pool_size: poolSize,
      connections,
      duration_s: duration,
      req_per_s: Math.round(result.requests.average),
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
      non_2xx: result.non2xx,
      rows_stored: rows[0].n,
    };
  } finally {
    await server.stop();
    await db.query("TRUNCATE ceiling_insert");
    await db.end();
  }
}

/** pgbench's figure for the same insert (16 clients, 2 threads): the comparison. */
export function measurePgbench({ clients = 16, duration = 10, databaseUrl = DEFAULT_CEILING_DATABASE_URL } = {}) {
  const script = path.join(os.tmpdir(), `ceiling-pgbench-${process.pid}.sql`);
  require("node:fs").writeFileSync(script, `INSERT INTO ceiling_insert (body) VALUES ('{"number":"+12125550123","checks":["number.spam"],"answer":{"status":"completed","spam_score":12,"reports":0}}'::jsonb);\n`);
  const r = spawnSync("pgbench", ["-n", "-M", "prepared", "-c", String(clients), "-j", "2", "-T", String(duration), "-f", script, databaseUrl], { encoding: "utf8" });
  require("node:fs").rmSync(script, { force: true });
  const tps = /tps = ([\d.]+)/.exec(r.stdout ?? "");
  if (r.status !== 0 || !tps) return { error: (r.stderr || r.error?.message || "pgbench failed").trim().slice(0, 300) };
  return { what: `pgbench -M prepared -c ${clients} -j 2 -T ${duration}, the same one-row JSONB insert`, clients, duration_s: duration, inserts_per_s: Math.round(Number(tps[1])) };
}

// --- redis -------------------------------------------------------------------

export async function measureRedis({ redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379", requests = 5000, pipelineSeconds = 2, pipelineDepth = 100 } = {}) {
  const { Redis } = require("ioredis");
  const redis = new Redis(redisUrl, { lazyConnect: false });
  const prefix = `bench-ceiling-${process.pid}:`;
  try {
    for (let i = 0; i < 500; i += 1) await redis.ping();
    const ping = [];
    const set = [];
    for (let i = 0; i < requests; i += 1) {
      let t = performance.now();
      await redis.ping();
      ping.push(performance.now() - t);
      t = performance.now();
      await redis.set(`${prefix}${i % 100}`, "x");
      set.push(performance.now() - t);
    }
    let ops = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < pipelineSeconds * 1000) {
      const p = redis.pipeline();
      for (let i = 0; i < pipelineDepth; i += 1) p.set(`${prefix}${i}`, "x");
      await p.exec();
      ops += pipelineDepth;
    }
    const seconds = (performance.now() - t0) / 1000;
    const keys = Array.from({ length: Math.max(100, pipelineDepth) }, (_, i) => `${prefix}${i}`);
    await redis.del(...keys);
    return {
      what: `ioredis, one connection: ${requests} sequential PINGs and SETs; pipelines of ${pipelineDepth} SETs for ${pipelineSeconds} s`,
      ping_ms: summary(ping),
      set_ms: summary(set),
      pipelined_ops_per_s: Math.round(ops / seconds),
    };
  } finally {
    redis.disconnect();
  }
}

// --- parse -------------------------------------------------------------------

function startParseThreads(lists, schedIdle = false) {
  return Promise.all(
    lists.map(
      (numbers) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(PARSE_THREAD, { workerData: { numbers, domainPackage: DOMAIN_PACKAGE, schedIdle } });
          worker.once("error", reject);
          worker.once("message", (m) => resolve({ worker, cold_ms: m.cold_ms, priority: m.priority }));
        }),
    ),
  );
}

/** Wall time (ms) of one pass on every thread, started together. */
async function parallelPass(threads) {
  const t = performance.now();
  const answers = await Promise.all(threads.map(({ worker }) => new Promise((resolve) => (worker.once("message", resolve), worker.postMessage("go")))));
  return { ms: performance.now() - t, valid: answers.reduce((a, m) => a + m.valid, 0) };
}

export async function measureParse({ numbers = 50_000, splitThreads = 1, parallelThreads = 2, rounds = 3 } = {}) {
  const list = jobNumbers(numbers);
  // One thread: a thread of its own (like an intake thread), cold pass then warm passes.
  const one = await startParseThreads([list]);
  const warm = [];
  let valid = 0;
  for (let i = 0; i < rounds; i += 1) {
    const r = await parallelPass(one);
    warm.push(r.ms);
    valid = r.valid;
  }
  await Promise.all(one.map(({ worker }) => worker.terminate()));
  // The same under SCHED_IDLE, as the gateway's intake threads run (INTAKE_THREAD_SCHED_IDLE, on by
  // default): on a quiet machine the same figure; with neighbours busy, what the scheduling policy costs.
  const idle = await startParseThreads([list], true);
  const idleMs = [];
  for (let i = 0; i < rounds; i += 1) idleMs.push((await parallelPass(idle)).ms);
  await Promise.all(idle.map(({ worker }) => worker.terminate()));
  // One request's list split over the gateway's intake threads of one process.
  let split = null;
  if (splitThreads > 1) {
    const share = Math.ceil(numbers / splitThreads);
    const threads = await startParseThreads(Array.from({ length: splitThreads }, (_, i) => list.slice(i * share, (i + 1) * share)));
    const ms = [];
    for (let i = 0; i < rounds; i += 1) ms.push((await parallelPass(threads)).ms);
    await Promise.all(threads.map(({ worker }) => worker.terminate()));
    split = median(ms);
  }
  // Every intake thread of the host busy at once, each with a whole list.
  const threads = await startParseThreads(Array.from({ length: parallelThreads }, () => list));
  const wall = [];
  for (let i = 0; i < rounds; i += 1) wall.push((await parallelPass(threads)).ms);
  await Promise.all(threads.map(({ worker }) => worker.terminate()));
  const oneMs = median(warm);
  return {
    what: `libphonenumber-js/max parsePhoneNumberFromString + isValid of ${numbers} numbers (bench/jobs.mjs's list) on worker threads; median of ${rounds} warm passes`,
    numbers,
    valid,
    one_thread_cold_ms: round(one[0].cold_ms),
    one_thread_ms: round(oneMs),
    one_thread_sched_idle_ms: round(median(idleMs)),
    sched_idle: idle[0].priority,
    split_threads: splitThreads,
    split_ms: round(split ?? oneMs),
    parallel_threads: parallelThreads,
    parallel_numbers_per_s: Math.round((parallelThreads * numbers) / (median(wall) / 1000)),
  };
}

// --- read (downloads) ---------------------------------------------------------

export async function measureRead({ rows = 50_000, rounds = 3, databaseUrl = DEFAULT_CEILING_DATABASE_URL } = {}) {
  await ensureScratchDatabase(databaseUrl);
  const QueryStream = createRequire(path.join(ROOT, "services/gateway/package.json"))("pg-query-stream");
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const jobId = `ceiling_${rows}`;
    const { rows: have } = await db.query("SELECT count(*)::int AS n FROM ceiling_rows WHERE job_id = $1", [jobId]);
    if (have[0].n !== rows) {
      // Rows shaped like a test job's result rows: a few short columns and a jsonb array of one check.
      await db.query("DELETE FROM ceiling_rows WHERE job_id = $1", [jobId]);
      await db.query(
        `INSERT INTO ceiling_rows (job_id, row_no, kind, input_masked, e164, country, number_status, checks)
         SELECT $1, g, 'number', '+1212***' || lpad((g % 10000)::text, 4, '0'), '+1212' || (2000000 + g * 7)::text, 'US', 'valid',
                jsonb_build_array(jsonb_build_object('service', 'number.spam', 'status', 'completed', 'registered', null, 'billed', false, 'cached', false,
                  'checked_at', '2026-11-23T12:00:00.000Z', 'attributes', jsonb_build_object('spam_score', g % 100, 'reports', g % 7, 'category', 'none', 'last_reported_at', null, 'line_type', 'fixed_line_or_mobile', 'carrier', 'Example Carrier ' || (g % 50))))
         FROM generate_series(1, $2::int) AS g`,
        [jobId, rows],
      );
      await db.query("ANALYZE ceiling_rows");
    }
    const { rows: size } = await db.query("SELECT sum(pg_column_size(c.*))::bigint AS bytes FROM ceiling_rows c WHERE job_id = $1", [jobId]);
    const once = async () => {
      const t = performance.now();
      let n = 0;
      const stream = db.query(new QueryStream(`SELECT row_no, kind, input_masked, e164, country, number_status, checks FROM ceiling_rows WHERE job_id = $1 ORDER BY row_no`, [jobId], { batchSize: 1_000 }));
      for await (const _row of stream) n += 1;
      if (n !== rows) throw new Error(`read ${n} rows, expected ${rows}`);
      return performance.now() - t;
    };
    await once();
    const ms = [];
    for (let i = 0; i < rounds; i += 1) ms.push(await once());
    return {
      what: `${rows} rows (~${Math.round(Number(size[0].bytes) / rows)} bytes each, a jsonb column) streamed through pg-query-stream in batches of 1,000, as the download reads; median of ${rounds} warm passes`,
      rows,
      megabytes: round(Number(size[0].bytes) / 1e6, 1),
      ms: round(median(ms)),
      rows_per_s: Math.round(rows / (median(ms) / 1000)),
    };
  } finally {
    await db.end();
  }
}

// --- all together ------------------------------------------------------------

function commit() {
  const sha = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim();
  const dirty = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8" }).stdout?.trim();
  return sha ? `${sha}${dirty ? " (+ uncommitted changes)" : ""}` : "unknown";
}

/**
 * Measures the named ceilings (ALL by default) in turn; progress on stderr.
 * Options: processes, poolSize, intakeThreads (default: gatewaySettings()); httpProcesses
 * and parseProcesses where the service under test runs another process count than the
 * gateway (the insert ceiling keeps the gateway's shape, so it is one figure everywhere);
 * httpDuration (the lookup bench's duration), insertDuration, connections.
 */
export async function measureCeilings(names = ALL, options = {}) {
  const g = { ...gatewaySettings(), ...Object.fromEntries(Object.entries({ processes: options.processes, poolSize: options.poolSize, intakeThreads: options.intakeThreads }).filter(([, v]) => v !== undefined && !Number.isNaN(v))) };
  const out = {
    measured_at: new Date().toISOString(),
    commit: commit(),
    machine: { cpus: os.availableParallelism(), node: process.version, loadavg_before: os.loadavg().map((x) => round(x, 2)) },
    settings: { gateway_processes: g.processes, database_pool_size: g.poolSize, intake_threads: g.intakeThreads },
  };
  const say = (s) => process.stderr.write(`[ceiling] ${s}\n`);
  for (const name of names) {
    const t = performance.now();
    if (name === "http") out.http = await measureHttp({ processes: options.httpProcesses ?? g.processes, connections: options.connections ?? 16, duration: options.httpDuration ?? 10, warmup: options.warmup ?? 2 });
    else if (name === "insert") out.insert = await measureInsert({ processes: g.processes, poolSize: g.poolSize, duration: options.insertDuration ?? 10, warmup: options.warmup ?? 2, databaseUrl: options.databaseUrl });
    else if (name === "redis") out.redis = await measureRedis({ redisUrl: options.redisUrl });
    else if (name === "parse") out.parse = await measureParse({ splitThreads: g.intakeThreads, parallelThreads: (options.parseProcesses ?? g.processes) * g.intakeThreads });
    else if (name === "read") out.read = await measureRead({ databaseUrl: options.databaseUrl });
    else if (name === "express") out.express = await measureExpressInsert({ processes: options.httpProcesses ?? g.processes, poolSize: g.poolSize, connections: options.connections ?? 16, duration: options.httpDuration ?? 10, warmup: options.warmup ?? 2, databaseUrl: options.databaseUrl });
    else if (name === "pgbench") out.pgbench = measurePgbench({ duration: options.insertDuration ?? 10, databaseUrl: options.databaseUrl ?? DEFAULT_CEILING_DATABASE_URL });
    else throw new Error(`unknown ceiling ${name} (known: ${[...ALL, "express", "pgbench"].join(", ")})`);
    say(`${name}: ${headline(out, name)} (${round((performance.now() - t) / 1000, 1)} s)`);
  }
  out.machine.loadavg_after = os.loadavg().map((x) => round(x, 2));
  return out;
}

/** One line per ceiling, for progress and tables. */
export function headline(c, name) {
  const v = c[name];
  if (!v) return "not measured";
  if (v.error) return `error: ${v.error}`;
  switch (name) {
    case "http":
      return `${v.req_per_s} req/s (${v.processes} proc, ${v.connections} conn); round trip p50 ${v.round_trip_ms.p50} ms p99 ${v.round_trip_ms.p99} ms`;
    case "insert":
      return `${v.inserts_per_s} inserts/s (${v.processes} x pool ${v.pool_size}); round trip SELECT 1 p50 ${v.round_trip_ms.select_1.p50} ms, insert p50 ${v.round_trip_ms.insert.p50} ms p99 ${v.round_trip_ms.insert.p99} ms`;
    case "redis":
      return `PING p50 ${v.ping_ms.p50} ms p99 ${v.ping_ms.p99} ms; SET p50 ${v.set_ms.p50} ms; pipelined ${v.pipelined_ops_per_s} ops/s`;
    case "parse":
      return `${v.numbers} numbers: 1 thread ${v.one_thread_ms} ms (cold ${v.one_thread_cold_ms} ms, SCHED_IDLE ${v.one_thread_sched_idle_ms} ms); split over ${v.split_threads} thread(s) ${v.split_ms} ms; ${v.parallel_threads} threads ${v.parallel_numbers_per_s} numbers/s`;
    case "read":
      return `${v.rows} rows (${v.megabytes} MB) in ${v.ms} ms`;
    case "pgbench":
      return `${v.inserts_per_s} inserts/s (${v.clients} clients)`;
    case "express":
      return `${v.req_per_s} req/s (${v.processes} proc, ${v.connections} conn, one group-committed row each; p99 ${v.latency_ms.p99} ms)`;
    default:
      return JSON.stringify(v);
  }
}

/** Reads a bench/ceiling.mjs JSON; warns when it is old (the machine drifts within minutes). */
export function loadCeilings(file) {
  const c = JSON.parse(readFileSync(file, "utf8"));
  const ageMin = (Date.now() - Date.parse(c.measured_at ?? statSync(file).mtime)) / 60_000;
  if (ageMin > 15) process.stderr.write(`[ceiling] warning: ${file} was measured ${Math.round(ageMin)} minutes ago; ratios mean most when the ceilings are measured just before\n`);
  return c;
}

/**
 * The ceilings a bench script needs: from `--ceilings FILE` (missing ones measured
 * now), none with `--ceilings none`, else all measured now, at the start of the run.
 */
export async function ceilingsFor(flag, names, options = {}) {
  if (flag === "none") return null;
  const loaded = flag ? loadCeilings(flag) : null;
  const missing = names.filter((n) => !loaded?.[n]);
  if (missing.length === 0) return loaded;
  const measured = await measureCeilings(missing, options);
  return loaded ? { ...loaded, ...Object.fromEntries(missing.map((n) => [n, measured[n]])), measured_now: missing } : measured;
}

/** The options every bench script accepts for its ceilings (parseArgs). */
export const CEILING_OPTIONS = {
  /** A bench/ceiling.mjs JSON measured just before, or "none"; default: measure at the start of the run. */
  ceilings: { type: "string", default: "" },
};

// --- ratios ------------------------------------------------------------------

/**
 * One reported figure and its ratio to a ceiling. `ratio` = value / ceiling (a
 * throughput as a fraction of what the machine can do; a time as a multiple of the
 * ceiling's time). `target` is text; `met` true/false, or null where there is none.
 */
export function ratioRow({ figure, value, unit, ceiling, ceilingValue, ceilingUnit, target = "", met = null }) {
  const ratio = ceilingValue > 0 && Number.isFinite(value) ? value / ceilingValue : null;
  return { figure, value, unit, ceiling, ceiling_value: ceilingValue, ceiling_unit: ceilingUnit, ratio: ratio === null ? null : round(ratio, ratio < 10 ? 3 : 1), target, met };
}

const fmt = (x) => (typeof x === "number" ? (Math.abs(x) >= 1000 ? Math.round(x).toLocaleString("en-US") : String(x)) : String(x ?? "—"));

/** A markdown table of ratio rows: figure, ceiling, ratio, target, met? */
export function markdownTable(rows) {
  const lines = ["| Figure | Measured | Ceiling (same run) | Ratio | Target | Met? |", "|---|---|---|---|---|---|"];
  for (const r of rows) {
    const ceiling = r.ceiling ? `${r.ceiling}: ${fmt(r.ceiling_value)} ${r.ceiling_unit ?? ""}`.trim() : "—";
    const ratio = r.ratio === null || r.ratio === undefined ? "—" : `${r.ratio}×`;
    lines.push(`| ${r.figure} | ${fmt(r.value)} ${r.unit ?? ""} | ${ceiling} | ${ratio} | ${r.target || "—"} | ${r.met === null || r.met === undefined ? "—" : r.met ? "yes" : "**no**"} |`);
  }
  return lines.join("\n");
}

/** Prints the ratio table on stderr (the JSON on stdout stays machine-readable). */
export function printRatios(rows, title = "Ratios to the ceilings measured in this run") {
  process.stderr.write(`\n${title}\n${markdownTable(rows)}\n\n`);
}
