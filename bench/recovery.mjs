#!/usr/bin/env node
// Time from a fault to the completion of a live job, with the fleet's settings as
// given (the defaults unless --env overrides them). The script makes its own
// database (migrated with `prisma migrate deploy`, dropped at the end) and Redis
// prefix, and starts a vendor simulator (--latency ms per answer), a gateway, a
// billing-ledger and a check-worker. It creates a live job (--rows numbers,
// whatsapp), waits until its chunks are at the vendor (half the latency in, or once
// --after-done chunks are done), then:
//   --fault redis    deletes every Redis key of the fleet's prefix (what FLUSHALL
//                    does to the fleet, without touching other users of the server);
//   --fault kill     SIGKILLs the check-worker and starts a new one at once (a
//                    Kubernetes restart; a second replica would behave the same);
//   --fault both     both at once: the attempts in flight die with their messages;
//   --fault restart  runs the fleet on a Redis server of its own and restarts it
//                    (Redis here keeps nothing on disk: a restart loses everything).
// It prints the chunks' states over time and the seconds from the fault to the
// job's `finished_at`. Run by hand, not a test:
//
//   node bench/recovery.mjs --fault both [--rows 20000] [--latency 3000] [--env WORK_LEASE_MS=300000] [--logs DIR]
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { Fleet, seedAccount } from "@svc/fleet-harness";
import { ensureDotEnv, ROOT } from "../scripts/lib.mjs";

ensureDotEnv();
const require = createRequire(import.meta.url);
const pg = require("pg");
const { Redis } = require("ioredis");

const { values } = parseArgs({
  options: {
    fault: { type: "string", default: "redis" },
    rows: { type: "string", default: "20000" },
    latency: { type: "string", default: "3000" },
    port: { type: "string", default: "8310" },
    env: { type: "string", multiple: true, default: [] },
    "timeout-s": { type: "string", default: "600" },
    logs: { type: "string" },
    "after-done": { type: "string" },
  },
});
if (!["redis", "kill", "both", "restart"].includes(values.fault)) throw new Error("--fault is redis, kill, both or restart");
const N = Number(values.rows);
const port = Number(values.port);
const base = `http://127.0.0.1:${port}`;
const extra = Object.fromEntries(values.env.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));

const adminUrl = process.env.SVC_TEST_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const dbName = `svc_bench_recovery_${randomBytes(3).toString("hex")}`;
const dbUrl = (() => {
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();
const prefix = `bench-rec-${randomBytes(3).toString("hex")}`;
// --fault restart runs the fleet on a Redis server of its own (restarting the shared one is not ours to do).
const privateRedisPort = port + 2;
const redisUrl = values.fault === "restart" ? `redis://127.0.0.1:${privateRedisPort}` : (process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
function startPrivateRedis() {
  const child = spawn("redis-server", ["--port", String(privateRedisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  process.on("exit", () => child.kill("SIGKILL"));
  return child;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const env = { ...process.env, LOG_LEVEL: "warn", PORT: String(port), WEB_CONCURRENCY: "1", DATABASE_URL: dbUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, VENDOR_PRIMARY_URL: `http://127.0.0.1:${port + 1}`, VENDOR_PRIMARY_KEY: "sim-key", ...extra };

const fleet = new Fleet();
/** Starts a built service (or the simulator) at LOG_LEVEL info; resolves when its log says it is ready. With --logs, its log goes to <name>-<pid>.log there. */
function start(name, childEnv) {
  let log = null;
  return fleet.startService(name, {
    env: { ...childEnv, LOG_LEVEL: "info" },
    stderr: "inherit",
    keep: 10_000,
    readyTimeoutMs: 30_000,
    onSpawn: (p) => (log = values.logs ? createWriteStream(path.join(values.logs, `${name}-${p.pid}.log`)) : null),
    onLine: (line) => log?.write(`${line}\n`),
  });
}

async function admin(sql) {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Every key of the prefix: `<prefix>:*` and the hash-tagged `{<prefix>:*` (the queues, packages/queues/src/keys.ts). */
async function deleteKeysUnder(redis, keyPrefix) {
  for (const pattern of [`${keyPrefix}:*`, `{${keyPrefix}:*`]) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== "0");
  }
}

const numbers = (n) => Array.from({ length: n }, (_, i) => `+1212${String(2_000_000 + ((i * 7 + 5) % 7_999_999)).padStart(7, "0")}`);

let privateRedis = values.fault === "restart" ? startPrivateRedis() : null;
if (privateRedis) await sleep(300);
const redis = new Redis(redisUrl);
redis.on("error", () => undefined);
await admin(`CREATE DATABASE "${dbName}"`);
let db;
try {
  const migrate = spawnSync(process.execPath, [path.join(ROOT, "scripts", "prisma.mjs"), "migrate", "deploy"], { cwd: ROOT, env: { ...process.env, DATABASE_URL: dbUrl }, encoding: "utf8" });
  if (migrate.status !== 0) throw new Error(`migration failed:\n${migrate.stdout}\n${migrate.stderr}`);
  db = new pg.Pool({ connectionString: dbUrl, max: 2 });

  await start("vendor-simulator", { ...process.env, SIM_PORT: String(port + 1), SIM_LATENCY_MS: values.latency });
  await start("gateway", env);
  await start("billing-ledger", env);
  let worker = await start("check-worker", env);

  const {
    keys: [key],
  } = await seedAccount(dbUrl, { keyHashSecret: env.KEY_HASH_SECRET, mode: "live", name: "bench-recovery", balanceMicros: 1_000_000_000_000n });
  // The gateway serves live checks only once a worker has advertised their routes.
  // routesKey (packages/sources/src/breaker.ts): hash-tagged with the routes and breakers' slot.
  while (!(await redis.get(`{${prefix}:sources}:routes:whatsapp`))) await sleep(100);

  const res = await fetch(`${base}/v1/jobs`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ numbers: numbers(N), checks: ["whatsapp"] }) });
  const job = await res.json();
  if (res.status !== 201) throw new Error(`job not created: ${res.status} ${JSON.stringify(job)}`);

  const chunkStates = async () => {
    const { rows } = await db.query(`SELECT status, count(*)::int AS n FROM job_chunks WHERE job_id = $1 GROUP BY status`, [job.id]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  // Mid-job: chunks in flight at the vendor (half its latency in), or once --after-done chunks are done.
  if (values["after-done"]) while (!((await chunkStates()).done >= Number(values["after-done"]))) await sleep(5);
  else {
    while (!((await chunkStates()).running > 0)) await sleep(20);
    await sleep(Number(values.latency) / 2);
  }
  const before = await chunkStates();

  const faultAt = Date.now();
  const t0 = performance.now();
  if (values.fault === "redis" || values.fault === "both") await deleteKeysUnder(redis, prefix);
  if (values.fault === "kill" || values.fault === "both") {
    worker.kill("SIGKILL");
    worker = await start("check-worker", env);
  }
  if (values.fault === "restart") {
    // Redis keeps nothing on disk here: a restart is Redis losing its data (and every connection).
    privateRedis.kill("SIGKILL");
    await new Promise((r) => privateRedis.once("exit", r));
    privateRedis = startPrivateRedis();
  }
  const timeline = [];
  let last = "";
  let finishedAt = null;
  let firstDoneS = null;
  while (performance.now() - t0 < Number(values["timeout-s"]) * 1000) {
    const states = await chunkStates();
    if (firstDoneS === null && (states.done ?? 0) > (before.done ?? 0)) firstDoneS = Math.round((performance.now() - t0) / 100) / 10;
    const shown = JSON.stringify(states);
    if (shown !== last) timeline.push({ s: Math.round((performance.now() - t0) / 100) / 10, ...states });
    last = shown;
    const { rows } = await db.query(`SELECT status, finished_at FROM jobs WHERE id = $1`, [job.id]);
    if (rows[0]?.finished_at) {
      finishedAt = rows[0].finished_at;
      timeline.push({ s: Math.round((performance.now() - t0) / 100) / 10, job: rows[0].status });
      break;
    }
    await sleep(250);
  }
  console.log(
    JSON.stringify(
      {
        command: `node bench/recovery.mjs ${process.argv.slice(2).join(" ")}`.trim(),
        rows: N,
        chunks: job.chunk_count ?? undefined,
        vendor_latency_ms: Number(values.latency),
        fault: values.fault,
        settings: extra,
        chunks_at_fault: before,
        timeline,
        first_chunk_done_after_fault_s: firstDoneS,
        fault_to_completion_s: finishedAt ? Math.round((new Date(finishedAt).getTime() - faultAt) / 100) / 10 : null,
      },
      null,
      2,
    ),
  );
} finally {
  await fleet.stop({ graceMs: 1_500 });
  await db?.end();
  // A Redis of our own takes the keys with it (cleaning it after it is gone waited on reconnects for over a minute).
  if (privateRedis) privateRedis.kill("SIGKILL");
  else await deleteKeysUnder(redis, prefix).catch(() => undefined);
  redis.disconnect();
  await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
}
