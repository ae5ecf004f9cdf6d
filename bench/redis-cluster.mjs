#!/usr/bin/env node
// One Redis against a Redis Cluster, same run, same machine minutes: test-mode lookups/s
// (autocannon, many keys) and a live job of --rows identifiers (1 check, 1 check-worker,
// the vendor simulator at 0 ms) through a fleet this script starts, once on the local
// Redis (REDIS_URL, default redis://127.0.0.1:6379) and once on a local 3-master +
// 3-replica cluster it starts (scripts/redis-cluster.mjs, free loopback ports), in
// alternating rounds. Prints each figure and the cluster ÷ one-Redis ratio.
//
//   node bench/redis-cluster.mjs [--rounds 2] [--rows 50000] [--duration 15] [--keys 1000] [--connections 32]
//
// Run it under `flock /tmp/bench.lock` on a shared machine.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { Fleet, httpOk, seedAccount } from "@svc/fleet-harness";
import { ensureDotEnv, ROOT } from "../scripts/lib.mjs";
import { ensureMigratedDatabase } from "./lib/setup.mjs";
import { start as startCluster, stop as stopCluster } from "../scripts/redis-cluster.mjs";

ensureDotEnv();

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    rows: { type: "string", default: "50000" },
    duration: { type: "string", default: "15" },
    // Each key may send 10 requests/s (the spec's limit): 1,000 keys keep ~4,500/s under it.
    keys: { type: "string", default: "1000" },
    connections: { type: "string", default: "32" },
    port: { type: "string", default: "8390" },
  },
});
const N = Number(values.rows);
const base = `http://127.0.0.1:${values.port}`;
const single = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const clusterDir = `/tmp/svc-bench-cluster-${randomBytes(3).toString("hex")}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Whatever ends this script stops the fleet (and the cluster, below); a service dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
process.on("exit", () => stopCluster({ dir: clusterDir }));
/** A built program in `env`, its log (warn and above) on our stderr; the gateway is up once it answers /v1/health. */
const start = (name, env) =>
  fleet.startService(name, { env, stdout: "ignore", stderr: "inherit", ...(name === "gateway" ? { ready: httpOk(`${base}/v1/health`), readyTimeoutMs: 30_000 } : { ready: null }) });

const keysFor = async (mode, count) =>
  (await seedAccount(process.env.DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode, count, name: `bench-cluster-${mode}`, balanceMicros: 1_000_000_000_000n })).keys;

const numbers = (n, salt) => Array.from({ length: n }, (_, i) => `+1212${String(2_000_000 + ((i * 7 + salt) % 7_999_999)).padStart(7, "0")}`);

async function call(method, url, key, body) {
  const res = await fetch(url, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text || "null") };
}

/** One fleet (gateway, ledger, one check-worker, simulator) on `redisUrl`: test lookups/s, then the live job. */
async function round(mode, redisUrl, salt) {
  const simPort = Number(values.port) + 1;
  const env = { ...process.env, LOG_LEVEL: "warn", PORT: values.port, WEB_CONCURRENCY: "1", METRICS_PORT: "0", REDIS_URL: redisUrl, REDIS_PREFIX: `bench-rc-${randomBytes(3).toString("hex")}`, VENDOR_PRIMARY_URL: `http://127.0.0.1:${simPort}`, VENDOR_PRIMARY_KEY: "sim-key" };
  const starting = [start("vendor-simulator", { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: "0" }), start("gateway", env), start("billing-ledger", env), start("check-worker", env)];
  await sleep(3_000); // the pause the figures were always taken after
  await Promise.all(starting);

  const testKeys = await keysFor("test", Number(values.keys));
  let n = 0;
  const body = JSON.stringify({ numbers: ["+12125550123"], checks: ["number.spam"] });
  const load = (duration) =>
    autocannon({
      url: `${base}/v1/lookup`,
      connections: Number(values.connections),
      duration,
      requests: [{ method: "POST", setupRequest: (req) => ({ ...req, body, headers: { "content-type": "application/json", authorization: `Bearer ${testKeys[n++ % testKeys.length]}` } }) }],
    });
  await load(3); // warm-up, discarded
  const lookups = await load(Number(values.duration));

  const [liveKey] = await keysFor("live", 1);
  const t0 = performance.now();
  const job = await call("POST", `${base}/v1/jobs`, liveKey, { numbers: numbers(N, salt), checks: ["whatsapp"] });
  let status = job.body?.status;
  while (status !== "completed" && status !== "failed" && performance.now() - t0 < 600_000) {
    status = (await call("GET", `${base}/v1/jobs/${job.body.id}?wait=30`, liveKey)).body?.status;
  }
  const liveSeconds = Math.round((performance.now() - t0) / 100) / 10;
  await fleet.stop();
  return {
    mode,
    test_lookups_per_s: Math.round(lookups.requests.average),
    test_lookup_p99_ms: lookups.latency.p99,
    non_2xx: lookups.non2xx,
    errors: lookups.errors,
    live_job: { rows: N, create_status: job.status, status, end_to_end_s: liveSeconds },
  };
}

// The fleet's database (DATABASE_URL, default the services' own default): created and migrated when it is not.
process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/svc_validate";
await ensureMigratedDatabase(process.env.DATABASE_URL, ROOT);
const clusterUrl = await startCluster({ ports: "auto", dir: clusterDir });
const results = [];
try {
  for (let r = 0; r < Number(values.rounds); r += 1) {
    // Alternate which goes first, so neither always has the warmer machine.
    const order = r % 2 === 0 ? [["one Redis", single], ["Redis Cluster", clusterUrl]] : [["Redis Cluster", clusterUrl], ["one Redis", single]];
    for (const [mode, url] of order) {
      const result = await round(mode, url, 100 * r + (mode === "one Redis" ? 1 : 2));
      results.push({ round: r + 1, ...result });
      console.error(JSON.stringify(results.at(-1)));
    }
  }
} finally {
  await fleet.stop();
  stopCluster({ dir: clusterDir });
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) * 10) / 10;
};
const of = (mode, pick) => median(results.filter((x) => x.mode === mode).map(pick));
const summary = {
  command: `node bench/redis-cluster.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  rounds: results,
  median: {
    test_lookups_per_s: { one_redis: of("one Redis", (x) => x.test_lookups_per_s), cluster: of("Redis Cluster", (x) => x.test_lookups_per_s) },
    live_job_end_to_end_s: { one_redis: of("one Redis", (x) => x.live_job.end_to_end_s), cluster: of("Redis Cluster", (x) => x.live_job.end_to_end_s) },
  },
};
summary.ratio_cluster_to_one = {
  test_lookups_per_s: Math.round((summary.median.test_lookups_per_s.cluster / summary.median.test_lookups_per_s.one_redis) * 100) / 100,
  live_job_end_to_end_s: Math.round((summary.median.live_job_end_to_end_s.cluster / summary.median.live_job_end_to_end_s.one_redis) * 100) / 100,
};
console.log(JSON.stringify(summary, null, 2));
