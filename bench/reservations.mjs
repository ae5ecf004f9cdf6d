#!/usr/bin/env node
// Reservation throughput and the latency that rate limiting plus reservation add to
// a request, measured against the local Postgres and Redis (no HTTP, no fleet).
//
//   node bench/reservations.mjs [--concurrency 16] [--duration 10] [--accounts 1] [--ceilings FILE|none]
//
// Reservations/s are printed as a ratio to single-row inserts/s through pg with the
// gateway's pool settings, and the added latency to one client's sequential insert
// plus Redis PING round trips (bench/lib/ceilings.mjs), measured at the start of the
// run (or read from a bench/ceiling.mjs JSON taken just before).
//
// Each operation is what the gateway does for a live request before any check:
// one GCRA rate-limit script in Redis, then one transaction that reserves the
// maximum cost (reservation INSERT, conditional UPDATE of the account row, COMMIT),
// taking this process's turn on the account as the gateway does.
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Redis } from "ioredis";
import { seedAccount } from "@svc/fleet-harness";
import { ensureDotEnv, ROOT } from "../scripts/lib.mjs";
import { CEILING_OPTIONS, ceilingsFor, printRatios, ratioRow } from "./lib/ceilings.mjs";

ensureDotEnv();
const require = createRequire(import.meta.url);
const store = require(path.join(ROOT, "packages/store/dist/index.js"));
const { newId } = require(path.join(ROOT, "packages/domain/dist/index.js"));

const { values } = parseArgs({
  options: {
    concurrency: { type: "string", default: "16" },
    duration: { type: "string", default: "10" },
    accounts: { type: "string", default: "1" },
    turns: { type: "string", default: "3" },
    rate: { type: "string", default: "0" },
    ...CEILING_OPTIONS,
  },
});
const ceilings = await ceilingsFor(values.ceilings, ["insert", "redis"], { insertDuration: 5 });
const concurrency = Number(values.concurrency);
const durationMs = Number(values.duration) * 1000;

const s = store.createStore({ databaseUrl: process.env.DATABASE_URL, poolSize: concurrency + 2, applicationName: "bench" });
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
// The gateway's own script, so the figure is what a request pays.
const { GCRA } = require(path.join(ROOT, "services/gateway/dist/http/rate-limit.js"));

const accounts = [];
for (let i = 0; i < Number(values.accounts); i += 1) {
  const { accountId, keyIds } = await seedAccount(s.pool, { keyHashSecret: "bench-secret", mode: "live", name: "bench", balanceMicros: 1_000_000_000_000n });
  accounts.push({ id: accountId, keyId: keyIds[0] });
}

const turns = new store.KeyedSemaphore(Number(values.turns));
const latencies = [];
let ops = 0;
let refused = 0;
const day = new Date().toISOString().slice(0, 10);
const deadline = performance.now() + durationMs;
let n = 0;

// --rate R paces operations at R a second (open loop) to measure latency at a given
// load; without it every worker goes flat out (maximum throughput).
const rate = Number(values.rate);
const start = performance.now();
let scheduled = 0;

async function worker() {
  while (performance.now() < deadline) {
    if (rate > 0) {
      const at = start + (scheduled++ * 1000) / rate;
      const wait = at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const a = accounts[n++ % accounts.length];
    const t0 = performance.now();
    // Rate limit with a per-operation bucket: measures the script's cost, never refuses.
    await redis.eval(GCRA, 1, `bench:rl:${n}`, "100", "20");
    // The gateway's own code path: write, then reserve and commit on this process's turn for the account.
    const result = await store.reserveAndCommit(
      s.pool,
      turns,
      { reservationId: newId("reservation"), accountId: a.id, apiKeyId: a.keyId, keyHasCap: false, amountMicros: 2000n, identifiers: 1, day, unitPrices: { "number.spam": "2000" }, expiresAt: new Date(Date.now() + 3600_000) },
      async () => undefined,
    );
    latencies.push(performance.now() - t0);
    if (result.ok) ops += 1;
    else refused += 1;
  }
}

await Promise.all(Array.from({ length: concurrency }, worker));
latencies.sort((x, y) => x - y);
const pct = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] * 100) / 100;
const figures = {
  command: `node bench/reservations.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  accounts: accounts.length,
  concurrency,
  target_rate: rate || "max",
  duration_s: durationMs / 1000,
  reservations: ops,
  refused,
  reservations_per_s: Math.round(ops / (durationMs / 1000)),
  added_latency_ms: { p50: pct(50), p90: pct(90), p99: pct(99) },
};
if (ceilings) {
  const floor = Math.round((ceilings.insert.round_trip_ms.insert.p50 + ceilings.redis.ping_ms.p50) * 1000) / 1000;
  const tag = `${accounts.length} account(s), ${rate ? `${rate}/s paced` : `flat out, ${concurrency} concurrent`}`;
  figures.ceilings = { measured_at: ceilings.measured_at, insert: ceilings.insert, redis: ceilings.redis };
  figures.ratios = [
    ratioRow({ figure: `Reservations/s (${tag})`, value: figures.reservations_per_s, unit: "/s", ceiling: "insert", ceilingValue: ceilings.insert.inserts_per_s, ceilingUnit: "inserts/s", ...(!rate && accounts.length === 1 ? { target: "≥ 1,000/s", met: figures.reservations_per_s >= 1000 } : {}) }),
    ratioRow({ figure: `Added latency p50 (${tag})`, value: figures.added_latency_ms.p50, unit: "ms", ceiling: "pg insert + Redis PING round trips p50", ceilingValue: floor, ceilingUnit: "ms", ...(rate ? { target: "< 2 ms", met: figures.added_latency_ms.p50 < 2 } : {}) }),
  ];
  printRatios(figures.ratios);
}
console.log(JSON.stringify(figures, null, 2));
await s.pool.query(`DELETE FROM reservations WHERE account_id = ANY($1)`, [accounts.map((a) => a.id)]);
await s.pool.query(`DELETE FROM accounts WHERE id = ANY($1)`, [accounts.map((a) => a.id)]);
await s.close();
await redis.quit();
