#!/usr/bin/env node
// The SDK's own cost per call: the same test-mode lookup (one number, number.spam)
// sent with raw `fetch` and with `client.lookups.create()`, interleaved in one run
// against a running gateway (`npm run up`, or the gateway alone: test mode needs no
// worker). Both send the same request (Authorization, JSON body, an Idempotency-Key),
// so the server's work is the same and the difference is the SDK's: building the
// request, the time limit, the retry bookkeeping and the response shape check.
// Creates its own account and keys (the per-key rate limit is 10 a second).
//
//   node bench/sdk-overhead.mjs [--url http://localhost:8080] [--calls 3000] [--keys 200] [--warmup 300]
import { parseArgs } from "node:util";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { seedAccount } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv, ROOT } from "../scripts/lib.mjs";

ensureDotEnv();
const { Client } = await import(path.join(ROOT, "packages/sdk/dist/index.mjs"));

const { values } = parseArgs({
  options: {
    url: { type: "string", default: process.env.BENCH_URL ?? `http://localhost:${process.env.PORT ?? 8080}` },
    calls: { type: "string", default: "3000" },
    keys: { type: "string", default: "200" },
    warmup: { type: "string", default: "300" },
  },
});
const url = values.url.replace(/\/+$/, "");

const { keys } = await seedAccount(process.env.DATABASE_URL || DEFAULT_DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode: "test", count: Number(values.keys), name: "bench sdk-overhead", balanceMicros: 0n });

const body = { numbers: ["+12125550123"], checks: ["number.spam"] };
const clients = keys.map((apiKey) => new Client({ apiKey, baseUrl: url, maxRetries: 0 }));
const unchecked = keys.map((apiKey) => new Client({ apiKey, baseUrl: url, maxRetries: 0, validateResponses: false }));

async function raw(i) {
  const res = await fetch(`${url}/v1/lookup`, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: `Bearer ${keys[i % keys.length]}`, "Idempotency-Key": randomUUID(), "User-Agent": "bench" },
    body: JSON.stringify(body),
  });
  const data = await res.json();
  if (res.status !== 200) throw new Error(`raw fetch: HTTP ${res.status} ${JSON.stringify(data)}`);
  return data;
}
const sdk = (i) => clients[i % clients.length].lookups.create(body);
const sdkUnchecked = (i) => unchecked[i % unchecked.length].lookups.create(body);

const variants = { raw, sdk, "sdk, no shape check": sdkUnchecked };
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
const names = Object.keys(variants);
let i = 0;
async function round(record) {
  // Rotate the order each round so no variant always goes first (warm caches, GC).
  const order = names.map((_, j) => names[(i + j) % names.length]);
  for (const name of order) {
    const t0 = process.hrtime.bigint();
    await variants[name](i);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (record) samples[name].push(ms);
  }
  i += 1;
}
// The same two paths with the network taken out: a fetch that answers from memory
// with the body the gateway gave above, so only client-side CPU is left to compare.
const captured = JSON.stringify(await raw(0)); // measured first, while the process is fresh
const memoryFetch = async () => new Response(captured, { status: 200, headers: { "Content-Type": "application/json", "X-Request-Id": "req_bench" } });
const memoryClient = new Client({ apiKey: keys[0], baseUrl: url, maxRetries: 0, fetch: memoryFetch });
async function memoryRaw() {
  const res = await memoryFetch(`${url}/v1/lookup`, {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json", Authorization: `Bearer ${keys[0]}`, "Idempotency-Key": randomUUID(), "User-Agent": "bench" },
    body: JSON.stringify(body),
  });
  return res.json();
}
const cpu = {};
for (const [name, fn] of [["raw", memoryRaw], ["sdk", () => memoryClient.lookups.create(body)]]) {
  for (let n = 0; n < 5_000; n += 1) await fn(); // warm-up
  const runs = [];
  for (let r = 0; r < 5; r += 1) {
    const t0 = process.hrtime.bigint();
    for (let n = 0; n < 20_000; n += 1) await fn();
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6 / 20_000);
  }
  cpu[name] = runs.sort((a, b) => a - b)[2]; // median of five runs, ms per call
}

for (let n = 0; n < Number(values.warmup); n += 1) await round(false);
for (let n = 0; n < Number(values.calls); n += 1) await round(true);

const q = (arr, p) => {
  const s = [...arr].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const stats = (arr) => ({ p50: +q(arr, 0.5).toFixed(3), p90: +q(arr, 0.9).toFixed(3), p99: +q(arr, 0.99).toFixed(3), mean: +(arr.reduce((a, b) => a + b, 0) / arr.length).toFixed(3) });
const paired = (a, b) => samples[a].map((v, n) => v - samples[b][n]);
const summary = {
  command: `node bench/sdk-overhead.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  node: process.version,
  calls_per_variant: Number(values.calls),
  keys: keys.length,
  latency_ms: Object.fromEntries(names.map((n) => [n, stats(samples[n])])),
  overhead_ms: {
    "sdk p50 - raw p50": +(q(samples.sdk, 0.5) - q(samples.raw, 0.5)).toFixed(3),
    "median of paired (sdk - raw)": +q(paired("sdk", "raw"), 0.5).toFixed(3),
    "sdk without shape check p50 - raw p50": +(q(samples["sdk, no shape check"], 0.5) - q(samples.raw, 0.5)).toFixed(3),
  },
  client_cpu_ms_per_call_without_network: { raw: +cpu.raw.toFixed(4), sdk: +cpu.sdk.toFixed(4), overhead: +(cpu.sdk - cpu.raw).toFixed(4) },
};
console.log(JSON.stringify(summary, null, 2));
