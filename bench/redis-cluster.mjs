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
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { ensureDotEnv, ROOT } from "../scripts/lib.mjs";
import { ensureMigratedDatabase } from "./lib/setup.mjs";
import { start as startCluster, stop as stopCluster } from "../scripts/redis-cluster.mjs";

ensureDotEnv();
const require = createRequire(import.meta.url);
const { createStore, createAccount, insertApiKey } = require(path.join(ROOT, "packages/store/dist/index.js"));
const { generateApiKey, hashApiKey, keyHint, DEFAULT_SCOPES } = require(path.join(ROOT, "packages/domain/dist/index.js"));

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
const children = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function startProcess(file, env) {
  const child = spawn(process.execPath, [path.join(ROOT, ...file.split("/"))], { env, stdio: ["ignore", "ignore", "inherit"] });
  children.push(child);
  return child;
}
function stopAll() {
  for (const c of children.splice(0)) c.kill("SIGTERM");
}
process.on("uncaughtException", (err) => {
  stopAll();
  stopCluster({ dir: clusterDir });
  console.error(err);
  process.exit(1);
});

async function gatewayUp() {
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`${base}/v1/health`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline) throw new Error("the gateway did not answer /v1/health within 30 s");
    await sleep(200);
  }
}

async function keysFor(mode, n) {
  const store = createStore({ databaseUrl: process.env.DATABASE_URL, poolSize: 1 });
  const { id } = await createAccount(store.pool, { name: `bench-cluster-${mode}`, balanceMicros: 1_000_000_000_000n });
  const keys = [];
  for (let i = 0; i < n; i += 1) {
    const key = generateApiKey(mode);
    await insertApiKey(store.pool, { accountId: id, mode, keyHash: hashApiKey(process.env.KEY_HASH_SECRET, key), hint: keyHint(key), scopes: [...DEFAULT_SCOPES], allowIps: [], dailySpendCapMicros: null, expiresAt: null });
    keys.push(key);
  }
  await store.close();
  return keys;
}

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
  startProcess("packages/vendor-simulator/dist/main.js", { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: "0" });
  startProcess("services/gateway/dist/main.js", env);
  startProcess("services/billing-ledger/dist/main.js", env);
  startProcess("services/check-worker/dist/main.js", env);
  await sleep(3_000);
  await gatewayUp();

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
  stopAll();
  await sleep(2_000);
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
  stopAll();
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
