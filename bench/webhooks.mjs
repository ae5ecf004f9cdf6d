#!/usr/bin/env node
// Webhook figures against one webhook-dispatcher process this script starts (fresh
// Redis prefix, the local Postgres): signed deliveries per second to a local HTTPS
// receiver, and the delay from an event being recorded to its first delivery
// attempt (p50/p99) at a steady offered rate.
//
//   node bench/webhooks.mjs [--flood 20000] [--rate 500] [--seconds 20] [--endpoints 20] [--concurrency N] [--cpu-prof DIR] [--ceilings FILE|none]
//
// Deliveries per second are printed as ratios to ceilings (bench/lib/ceilings.mjs)
// measured at the start of the run (or read from a bench/ceiling.mjs JSON taken just
// before): a bare node:http cluster's req/s (16 connections; the gateway's process
// count) and single-row inserts/s through pg (a delivery writes two statements).
//
// Events are recorded the way producers record them (an INSERT into `events`, then
// an event.dispatch message after commit), in batches every 20 ms. The receiver runs
// in this process on loopback, speaks TLS with a throw-away CA that the dispatcher
// trusts through WEBHOOK_EXTRA_CA_FILE, and verifies a sample of signatures with the
// standardwebhooks package.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import { Fleet, seedAccount } from "@svc/fleet-harness";
import { ensureDotEnv, ROOT } from "../scripts/lib.mjs";
import { CEILING_OPTIONS, ceilingsFor, printRatios, ratioRow } from "./lib/ceilings.mjs";

ensureDotEnv();
const require = createRequire(import.meta.url);
const { createStore, createEndpoint, withTransaction } = require(path.join(ROOT, "packages/store/dist/index.js"));
const { idMonth, newId } = require(path.join(ROOT, "packages/domain/dist/index.js"));
const { Producer, createRedis, announceEvents } = require(path.join(ROOT, "packages/queues/dist/index.js"));
const { dataKey, encryptSecret, newSigningSecret } = require(path.join(ROOT, "packages/webhooks/dist/index.js"));
const { createTestCertificates } = require(path.join(ROOT, "packages/webhooks/dist/testing/test-ca.js"));
const { WebhookReceiver } = require(path.join(ROOT, "packages/webhooks/dist/testing/receiver.js"));
const { Webhook } = require("standardwebhooks");

const { values } = parseArgs({
  options: {
    flood: { type: "string", default: "20000" },
    rate: { type: "string", default: "500" },
    seconds: { type: "string", default: "20" },
    endpoints: { type: "string", default: "20" },
    concurrency: { type: "string", default: "" },
    /** Write a V8 CPU profile of the dispatcher to this directory. */
    "cpu-prof": { type: "string", default: "" },
    ...CEILING_OPTIONS,
  },
});
// The ceilings first, before the dispatcher starts.
const ceilings = await ceilingsFor(values.ceilings, ["http", "insert"], { httpDuration: 5, insertDuration: 5 });
const FLOOD = Number(values.flood);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const ENDPOINTS = Number(values.endpoints);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const prefix = `bench-wh-${randomBytes(3).toString("hex")}`;
const certs = createTestCertificates();
const receiver = await new WebhookReceiver(certs).start();
const store = createStore({ databaseUrl: process.env.DATABASE_URL, poolSize: 4, applicationName: "bench-webhooks" });
const redis = createRedis(process.env.REDIS_URL, "producer", "bench-webhooks");
const producer = new Producer(redis, prefix);

// One live account with ENDPOINTS verified endpoints on the receiver.
const { accountId } = await seedAccount(store.pool, { keyHashSecret: process.env.KEY_HASH_SECRET, count: 0, name: "bench-webhooks", balanceMicros: 0n });
const key = dataKey(process.env.DATA_ENCRYPTION_KEY);
const endpoints = [];
for (let i = 0; i < ENDPOINTS; i += 1) {
  const secret = newSigningSecret();
  const made = await withTransaction(store.pool, (c) =>
    createEndpoint(c, { accountId, livemode: true, url: receiver.url(`/hook/${i}`), events: ["lookup.completed"], secretEncrypted: encryptSecret(key, secret), now: new Date() }),
  );
  endpoints.push({ id: made.endpoint.id, secret });
}
await store.pool.query(`UPDATE webhook_endpoints SET status = 'active', verified_at = now(), next_verification_at = NULL WHERE account_id = $1`, [accountId]);
await store.pool.query(`UPDATE events SET dispatched_at = now() WHERE account_id = $1`, [accountId]); // the challenges are not part of the figures

const dispatcherEnv = {
  ...process.env,
  LOG_LEVEL: "warn",
  REDIS_PREFIX: prefix,
  WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8",
  WEBHOOK_EXTRA_CA_FILE: certs.caFile,
  ...(values.concurrency ? { CONCURRENCY: values.concurrency } : {}),
};
const profile = values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : [];
// Stopped whatever ends this script; dying on its own ends the run.
const fleet = new Fleet({ failFast: true });
const dispatcher = await fleet.startService("webhook-dispatcher", { env: dispatcherEnv, nodeFlags: profile, stdout: "ignore", stderr: "inherit", ready: null });
await sleep(2_000); // consuming by then (at LOG_LEVEL warn it says nothing); the figures were always taken after this pause

const DATA = { object: "lookup", id: "lkp_bench000000000000", status: "completed", livemode: true, summary: { total: 1, registered: 1, not_registered: 0, unknown: 0 } };
let seq = 0;
/** Records `n` events in one transaction (as n producers committing together), then announces them. */
async function recordBatch(n) {
  const ids = Array.from({ length: n }, () => newId("event"));
  const targets = ids.map(() => endpoints[(seq += 1) % endpoints.length].id);
  await store.pool.query(
    `INSERT INTO events (id, account_id, livemode, type, data, endpoint_id, created_at, id_month)
     SELECT id, $2, true, 'lookup.completed', $3, endpoint_id, clock_timestamp(), m::date FROM unnest($1::text[], $4::text[], $5::text[]) AS t(id, endpoint_id, m)`,
    [ids, accountId, JSON.stringify(DATA), targets, ids.map(idMonth)],
  );
  await announceEvents(producer, ids);
  return ids;
}

async function drain(expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (receiver.requests.length < expected && Date.now() < deadline) await sleep(20);
}

/** Event recorded → first attempt started, from the store (ms). */
async function firstAttemptDelays(ids) {
  const { rows } = await store.pool.query(
    `SELECT extract(epoch FROM (a.started_at - ev.created_at)) * 1000 AS ms
     FROM events ev JOIN webhook_deliveries d ON d.event_id = ev.id JOIN delivery_attempts a ON a.delivery_id = d.id AND a.attempt_no = 1
     WHERE ev.id = ANY($1::text[])`,
    [ids],
  );
  return rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
}

const results = { command: `node bench/webhooks.mjs ${process.argv.slice(2).join(" ")}`.trim(), endpoints: ENDPOINTS };

// 1. Throughput: FLOOD events recorded at once; deliveries per second until all are in.
{
  const before = receiver.requests.length;
  const ids = [];
  const t0 = performance.now();
  for (let i = 0; i < FLOOD; i += 1000) ids.push(...(await recordBatch(Math.min(1000, FLOOD - i))));
  const recorded = performance.now();
  await drain(before + FLOOD, 120_000);
  const ms = performance.now() - t0;
  const got = receiver.requests.length - before;
  results.flood = { events: FLOOD, delivered: got, record_ms: Math.round(recorded - t0), seconds: Math.round(ms / 100) / 10, deliveries_per_second: Math.round(got / (ms / 1000)) };
}

// 2. Latency at a steady offered rate: RATE events per second for SECONDS.
{
  await sleep(1_000);
  const before = receiver.requests.length;
  const ids = [];
  const perTick = RATE / 50;
  let owed = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    const tick = performance.now();
    owed += perTick;
    const n = Math.floor(owed);
    owed -= n;
    if (n > 0) ids.push(...(await recordBatch(n)));
    await sleep(Math.max(0, 20 - (performance.now() - tick)));
  }
  const offeredSeconds = (performance.now() - t0) / 1000;
  await drain(before + ids.length, 60_000);
  const delays = await firstAttemptDelays(ids);
  results.steady = {
    offered_per_second: Math.round(ids.length / offeredSeconds),
    events: ids.length,
    delivered: receiver.requests.length - before,
    first_attempt_ms: { p50: Math.round(pct(delays, 50)), p90: Math.round(pct(delays, 90)), p99: Math.round(pct(delays, 99)), max: Math.round(delays.at(-1) ?? 0) },
  };
}

// Signatures verify with the independent library (a sample of 200).
const bySecret = new Map(endpoints.map((e, i) => [`/hook/${i}`, e.secret]));
let verified = 0;
for (const req of receiver.requests.filter((_, i) => i % Math.max(1, Math.floor(receiver.requests.length / 200)) === 0)) {
  new Webhook(bySecret.get(req.path)).verify(req.body, { "webhook-id": req.headers["webhook-id"], "webhook-timestamp": req.headers["webhook-timestamp"], "webhook-signature": req.headers["webhook-signature"] });
  verified += 1;
}
results.signatures_verified = verified;

if (ceilings) {
  const perS = results.flood.deliveries_per_second;
  results.ceilings = { measured_at: ceilings.measured_at, http: ceilings.http, insert: ceilings.insert };
  results.ratios = [
    ratioRow({ figure: `Signed deliveries/s, one dispatcher (flood of ${FLOOD})`, value: perS, unit: "/s", ceiling: `bare http (${ceilings.http.processes} proc)`, ceilingValue: ceilings.http.req_per_s, ceilingUnit: "req/s", target: "≥ 500/s", met: perS >= 500 && results.flood.delivered === FLOOD }),
    ratioRow({ figure: "Signed deliveries/s ÷ single-row inserts/s", value: perS, unit: "/s", ceiling: "insert", ceilingValue: ceilings.insert.inserts_per_s, ceilingUnit: "inserts/s" }),
    ratioRow({ figure: `Event recorded → first attempt p99 at ${results.steady.offered_per_second}/s offered`, value: results.steady.first_attempt_ms.p99, unit: "ms", ceiling: "", ceilingValue: NaN, ceilingUnit: "", target: "p99 < 1 s", met: results.steady.first_attempt_ms.p99 < 1000 && results.steady.delivered >= results.steady.events }),
  ];
  printRatios(results.ratios);
}
console.log(JSON.stringify(results, null, 2));
await dispatcher.stop();
await producer.close();
await redis.quit();
await store.pool.query(`DELETE FROM accounts WHERE id = $1`, [accountId]);
await store.close();
await receiver.close();
process.exit(0);
