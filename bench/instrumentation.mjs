#!/usr/bin/env node
// The cost of issue 12's instrumentation on the hot path: test-mode POST /v1/lookup
// (one number, number.spam, rotating over 400 test keys, as bench/lookup-load.mjs)
// against a gateway this script starts, in three configurations run in turn in every
// cycle (the order rotates), because this machine swings 30-50 % between minutes:
//
//   pre12    the build from before issue 12 (a git worktree at 0c03cf9, built;
//            --pre12 names its root), no metrics, no tracing code at all;
//   metrics  the current build, METRICS_PORT on, tracing off, and a scraper that
//            GETs /metrics every second during the run (Prometheus at 1 s, 15x its
//            usual rate, so the scrape's own cost is in the figures);
//   tracing  the current build, metrics and the scraper as above, and tracing on
//            (always sampled, the default) exporting over OTLP/HTTP to a loopback
//            receiver that accepts every POST with an empty 200.
//
// Each run: fresh gateway processes, 5 s warm-up discarded, then the measured run.
// Ratios are against the pre12 run of the same cycle; the medians are over cycles.
// Besides req/s and p99 it reports the gateway's CPU time per 1,000 requests (user +
// system of the primary and its worker processes, from /proc), which a busy machine
// disturbs far less than throughput: it says what the instrumentation costs, where
// req/s also says how much CPU the neighbours left.
//
//   git worktree add /tmp/pre12 0c03cf9     # then node_modules (npm ci, or a hard-linked copy
//                                           # of this checkout's: cp -al), and npx turbo run build there
//   git worktree add /tmp/cur12 HEAD        # the same, to keep work in progress out of "current"
//   node bench/instrumentation.mjs [--pre12 /tmp/pre12] [--current .] [--cycles 5] [--duration 20] [--connections 16] [--processes 2]
//
// Needs the local Postgres and Redis. Uses its own database (created and migrated
// when missing; --database-url) and Redis prefixes, and generates its secrets.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Fleet, httpOk, seedAccount } from "@svc/fleet-harness";
import { cpuSeconds, ensureMigratedDatabase } from "./lib/setup.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const { values } = parseArgs({
  options: {
    pre12: { type: "string", default: "/tmp/pre12" },
    // The build measured as "current": this checkout, or a worktree of a commit (other work in progress stays out).
    current: { type: "string", default: ROOT },
    cycles: { type: "string", default: "5" },
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    connections: { type: "string", default: "16" },
    processes: { type: "string", default: "2" },
    keys: { type: "string", default: "400" },
    port: { type: "string", default: "8390" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/svc_bench_instrumentation" },
    "redis-url": { type: "string", default: "redis://127.0.0.1:6379" },
  },
});

const DATABASE_URL = values["database-url"];
const PORT = Number(values.port);
const METRICS_PORT = PORT + 1;
const OTLP_PORT = PORT + 2;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round3 = (x) => Math.round(x * 1000) / 1000;


const secrets = {
  KEY_HASH_SECRET: randomBytes(32).toString("hex"),
  CACHE_HASH_SECRET: randomBytes(32).toString("hex"),
  DATA_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  FLEET_MESSAGE_KEY: randomBytes(32).toString("base64"),
};

/** An account with `n` test keys (each key is rate limited to 10 a second). */
const makeKeys = async (n) => (await seedAccount(DATABASE_URL, { keyHashSecret: secrets.KEY_HASH_SECRET, mode: "test", count: n, name: "bench-instrumentation", balanceMicros: 0n })).keys;

/** A loopback OTLP/HTTP receiver: accepts every POST, reads it, answers 200 with an empty body. */
async function startOtlpReceiver() {
  const stats = { posts: 0, bytes: 0 };
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on("data", (d) => (bytes += d.length));
    req.on("end", () => {
      stats.posts += 1;
      stats.bytes += bytes;
      res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/x-protobuf", "content-length": 0 }).end();
    });
  });
  await new Promise((resolve) => server.listen(OTLP_PORT, "127.0.0.1", resolve));
  return { stats, close: () => new Promise((resolve) => server.close(resolve)) };
}

const CONFIGS = {
  pre12: { root: () => values.pre12, env: () => ({}) },
  metrics: { root: () => values.current, env: () => ({ METRICS_PORT: String(METRICS_PORT), METRICS_HOST: "127.0.0.1" }), scrape: true },
  tracing: {
    root: () => values.current,
    env: () => ({ METRICS_PORT: String(METRICS_PORT), METRICS_HOST: "127.0.0.1", OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_PORT}` }),
    scrape: true,
  },
};

// Whatever ends this script stops the gateway it runs; a gateway dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

async function startGateway(config) {
  // A gateway left over on the port would answer for this one (with other secrets: 401s).
  if (await fetch(`http://127.0.0.1:${PORT}/v1/health`).then(() => true, () => false)) throw new Error(`something already answers on port ${PORT}`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LOG_LEVEL: "warn",
    PORT: String(PORT),
    WEB_CONCURRENCY: values.processes,
    DATABASE_URL,
    REDIS_URL: values["redis-url"],
    REDIS_PREFIX: `bench-instr-${randomBytes(3).toString("hex")}`,
    SHUTDOWN_TIMEOUT_MS: "10000",
    DRAIN_DELAY_MS: "0",
    METRICS_PORT: "0",
    ...secrets,
    ...CONFIGS[config].env(),
  };
  const gateway = await fleet.startService("gateway", { root: CONFIGS[config].root(), cwd: process.cwd(), env, stdout: "ignore", stderr: "pipe", ready: httpOk(`http://127.0.0.1:${PORT}/v1/health`) });
  await sleep(1_000); // every cluster worker listening
  return { cpu: () => cpuSeconds(gateway.pid), stop: () => gateway.stop() };
}

/** GET /metrics every second, as a (very eager) Prometheus would. */
function startScraper() {
  const stats = { scrapes: 0, failures: 0, bytes: 0 };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t = Date.now();
      try {
        const res = await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`);
        const body = await res.text();
        if (res.status === 200) {
          stats.scrapes += 1;
          stats.bytes = body.length;
        } else stats.failures += 1;
      } catch {
        stats.failures += 1;
      }
      await sleep(Math.max(0, 1_000 - (Date.now() - t)));
    }
  })();
  return {
    stats,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

function load(keys, duration) {
  let n = 0;
  const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
  return autocannon({
    url: `http://127.0.0.1:${PORT}/v1/lookup`,
    connections: Number(values.connections),
    duration,
    requests: [{ method: "POST", setupRequest: (req) => ({ ...req, body, headers: { "content-type": "application/json", authorization: `Bearer ${keys[n++ % keys.length]}` } }) }],
  });
}

async function measure(config, keys) {
  const gateway = await startGateway(config);
  try {
    if (Number(values.warmup) > 0) await load(keys, Number(values.warmup));
    const scraper = CONFIGS[config].scrape ? startScraper() : null;
    const cpu0 = gateway.cpu();
    const result = await load(keys, Number(values.duration));
    const cpu = gateway.cpu() - cpu0;
    await scraper?.stop();
    if (scraper && (scraper.stats.scrapes < Number(values.duration) - 2 || scraper.stats.failures > 0)) {
      throw new Error(`${config}: the scraper got ${scraper.stats.scrapes} scrapes, ${scraper.stats.failures} failures`);
    }
    return {
      req_per_s: Math.round(result.requests.average),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      cpu_ms_per_1k: Math.round((cpu * 1e7) / result.requests.total) / 10, // CPU ms per 1,000 requests
      non_2xx: result.non2xx,
      errors: result.errors,
      ...(result.non2xx > 0 ? { status_codes: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])) } : {}),
      ...(scraper ? { scrapes: scraper.stats.scrapes, exposition_bytes: scraper.stats.bytes } : {}),
    };
  } finally {
    await gateway.stop();
  }
}

await ensureMigratedDatabase(DATABASE_URL, ROOT); // the same schema before and after issue 12
const keys = await makeKeys(Number(values.keys));
const receiver = await startOtlpReceiver();
const order = ["pre12", "metrics", "tracing"];
const cycles = [];
try {
  for (let c = 0; c < Number(values.cycles); c += 1) {
    const runs = {};
    // Rotate which configuration goes first, so none always runs on a warmer or cooler machine.
    for (let i = 0; i < order.length; i += 1) {
      const config = order[(i + c) % order.length];
      const posts = receiver.stats.posts;
      runs[config] = await measure(config, keys);
      if (config === "tracing") {
        runs.tracing.otlp_posts = receiver.stats.posts - posts;
        if (runs.tracing.otlp_posts === 0) throw new Error("tracing: nothing was exported");
      }
      if (runs[config].non_2xx > 0 || runs[config].errors > 0) throw new Error(`${config}: ${runs[config].non_2xx} non-2xx ${JSON.stringify(runs[config].status_codes ?? {})}, ${runs[config].errors} errors`);
    }
    const ratios = {
      metrics_over_pre12: { req_per_s: round3(runs.metrics.req_per_s / runs.pre12.req_per_s), p99: round3(runs.metrics.p99_ms / runs.pre12.p99_ms), cpu_per_request: round3(runs.metrics.cpu_ms_per_1k / runs.pre12.cpu_ms_per_1k) },
      tracing_over_pre12: { req_per_s: round3(runs.tracing.req_per_s / runs.pre12.req_per_s), p99: round3(runs.tracing.p99_ms / runs.pre12.p99_ms), cpu_per_request: round3(runs.tracing.cpu_ms_per_1k / runs.pre12.cpu_ms_per_1k) },
    };
    cycles.push({ runs, ratios });
    process.stderr.write(
      `cycle ${c + 1}: ` +
        order.map((k) => `${k} ${runs[k].req_per_s} req/s p99 ${runs[k].p99_ms} ms cpu ${runs[k].cpu_ms_per_1k} ms/1k`).join(" | ") +
        ` || metrics/pre12 req/s x${ratios.metrics_over_pre12.req_per_s} p99 x${ratios.metrics_over_pre12.p99} cpu x${ratios.metrics_over_pre12.cpu_per_request}` +
        ` | tracing/pre12 req/s x${ratios.tracing_over_pre12.req_per_s} p99 x${ratios.tracing_over_pre12.p99} cpu x${ratios.tracing_over_pre12.cpu_per_request}\n`,
    );
  }
} finally {
  await receiver.close();
}

const med = (pick) => round3(median(cycles.map(pick)));
console.log(
  JSON.stringify(
    {
      command: `node bench/instrumentation.mjs ${process.argv.slice(2).join(" ")}`.trim(),
      node: process.version,
      gateway_processes: Number(values.processes),
      connections: Number(values.connections),
      duration_s: Number(values.duration),
      cycles,
      median: {
        metrics_over_pre12: { req_per_s: med((c) => c.ratios.metrics_over_pre12.req_per_s), p99: med((c) => c.ratios.metrics_over_pre12.p99), cpu_per_request: med((c) => c.ratios.metrics_over_pre12.cpu_per_request) },
        tracing_over_pre12: { req_per_s: med((c) => c.ratios.tracing_over_pre12.req_per_s), p99: med((c) => c.ratios.tracing_over_pre12.p99), cpu_per_request: med((c) => c.ratios.tracing_over_pre12.cpu_per_request) },
        req_per_s: { pre12: median(cycles.map((c) => c.runs.pre12.req_per_s)), metrics: median(cycles.map((c) => c.runs.metrics.req_per_s)), tracing: median(cycles.map((c) => c.runs.tracing.req_per_s)) },
        p99_ms: { pre12: median(cycles.map((c) => c.runs.pre12.p99_ms)), metrics: median(cycles.map((c) => c.runs.metrics.p99_ms)), tracing: median(cycles.map((c) => c.runs.tracing.p99_ms)) },
        cpu_ms_per_1k: { pre12: median(cycles.map((c) => c.runs.pre12.cpu_ms_per_1k)), metrics: median(cycles.map((c) => c.runs.metrics.cpu_ms_per_1k)), tracing: median(cycles.map((c) => c.runs.tracing.cpu_ms_per_1k)) },
      },
    },
    null,
    2,
  ),
);
