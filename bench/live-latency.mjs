#!/usr/bin/env node
// The live lookup's latency budget (issue 14): where one live POST /v1/lookup of one
// number × `whatsapp` spends its time at a 0 ms vendor, step by step, and what the
// fleet reaches unloaded, at a paced 500 lookups/s and flat out with 10 numbers — for
// each build named on the command line, in turn in every cycle (the order rotates),
// because this machine swings 30-50 % between minutes. Ratios are to the first build.
//
//   git worktree add /tmp/lat14-base <commit>   # then a hard-linked node_modules
//                                               # (cp -al <checkout>/node_modules .) and npx turbo run build there
//   node bench/live-latency.mjs --builds /tmp/lat14-base,. [--cycles 2] [--traced 200] [--sequential 300] [--rate 500] [--rate-duration 6] [--wide-duration 8]
//
// Each build, each cycle, runs two fleets (gateway with one process, one check-worker,
// a billing-ledger, the vendor simulator at 0 ms in its own process, a fresh Redis prefix,
// the local Postgres of .env). A build that has scripts/db-deploy.mjs (issue 20 on) runs
// as `npm run up` runs it: each service with its own database role and Redis ACL user
// (made by that build's db-deploy.mjs and redis-acl.mjs --apply); older builds connect
// as the database owner and Redis' default user, as they were deployed.
//
//   traced   tracing on (always sampled), exporting OTLP/protobuf to a receiver in this
//            process, and `--traced` lookups one at a time. The pg, ioredis, http and
//            queue spans of each lookup's trace give the steps (table below); a step
//            is the sum of its spans in the trace, "in process" is what no span covers.
//   plain    tracing off: `--sequential` lookups one at a time (round trip p50/p99),
//            then `--rate` lookups/s for `--rate-duration` s (p99; autocannon, paced),
//            then 10-number lookups flat out for `--wide-duration` s (checks/s; 32 connections).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer, request } from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import autocannon from "autocannon";
import { Fleet, seedAccount } from "@svc/fleet-harness";
import { ensureDotEnv, ROOT, serviceConnections, serviceCredentialSettings } from "../scripts/lib.mjs";
import { cpuSeconds, ensureMigratedDatabase } from "./lib/setup.mjs";

ensureDotEnv();

const { values } = parseArgs({
  options: {
    builds: { type: "string", default: "." },
    cycles: { type: "string", default: "2" },
    traced: { type: "string", default: "200" },
    sequential: { type: "string", default: "300" },
    rate: { type: "string", default: "500" },
    "rate-duration": { type: "string", default: "6" },
    "wide-duration": { type: "string", default: "8" },
    "wide-connections": { type: "string", default: "32" },
    port: { type: "string", default: "8290" },
    only: { type: "string", default: "" },
    "database-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/svc_bench_live_latency" },
  },
});
// Its own database, created and migrated when missing; every fleet gets it.
process.env.DATABASE_URL = values["database-url"];
await ensureMigratedDatabase(values["database-url"], ROOT);
// A build is a checkout's path; `<path>#owner` runs that checkout as the database owner
// and Redis' default user even when it could run each service as itself.
const builds = values.builds.split(",").map((spec) => {
  const [dir, mode] = spec.split("#");
  return { root: path.resolve(ROOT, dir), asOwner: mode === "owner", label: mode ? `${path.relative(ROOT, path.resolve(ROOT, dir)) || "."}#${mode}` : path.relative(ROOT, path.resolve(ROOT, dir)) || "." };
});
const port = Number(values.port);

// ---- a minimal OTLP/protobuf trace decoder (only the fields used here) ----
function* fields(buf) {
  let i = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    const wt = tag & 7;
    if (wt === 0) yield [no, varint()];
    else if (wt === 1) {
      yield [no, buf.readBigUInt64LE(i)];
      i += 8;
    } else if (wt === 2) {
      const len = Number(varint());
      yield [no, buf.subarray(i, i + len)];
      i += len;
    } else if (wt === 5) {
      yield [no, buf.readUInt32LE(i)];
      i += 4;
    } else throw new Error(`wire type ${wt}`);
  }
}
function keyValue(buf) {
  let key = "";
  let value = null;
  for (const [no, v] of fields(buf)) {
    if (no === 1) key = v.toString("utf8");
    if (no === 2) for (const [n2, v2] of fields(v)) if (n2 === 1) value = v2.toString("utf8");
  }
  return [key, value];
}
function decodeTraces(buf, out) {
  for (const [no, rs] of fields(buf)) {
    if (no !== 1) continue;
    let service = "";
    const spans = [];
    for (const [n1, v1] of fields(rs)) {
      if (n1 === 1) for (const [n2, kv] of fields(v1)) if (n2 === 1) {
        const [k, v] = keyValue(kv);
        if (k === "service.name") service = v;
      }
      if (n1 === 2) for (const [n2, v2] of fields(v1)) if (n2 === 2) spans.push(v2);
    }
    for (const s of spans) {
      const span = { service, attrs: {} };
      for (const [n, v] of fields(s)) {
        if (n === 1) span.trace = v.toString("hex");
        else if (n === 2) span.id = v.toString("hex");
        else if (n === 4) span.parent = v.toString("hex");
        else if (n === 5) span.name = v.toString("utf8");
        else if (n === 6) span.kind = Number(v);
        else if (n === 7) span.start = Number(v) / 1e6; // ms
        else if (n === 8) span.end = Number(v) / 1e6;
        else if (n === 9) {
          const [k, val] = keyValue(v);
          span.attrs[k] = val;
        }
      }
      out.push(span);
    }
  }
}

// ---- the steps of one live lookup, from its trace ----
const statement = (s) => String(s.attrs["db.query.text"] ?? s.attrs["db.statement"] ?? s.name);
/** Step of a span, or null (spans inside another counted span, and untimed ones). */
function stepOf(s) {
  const gw = s.service === "gateway";
  const isPg = s.name.startsWith("pg.query") || s.attrs["db.system"] === "postgresql" || s.attrs["db.system.name"] === "postgresql";
  const isPgConnect = s.name.startsWith("pg.connect") || s.name.startsWith("pg-pool.connect");
  const isRedis = s.attrs["db.system"] === "redis" || s.attrs["db.system.name"] === "redis";
  const job = s.attrs["svc.job.name"];
  if (s.kind === 4 /* producer */) return job === "lookup.run" ? "gateway: enqueue lookup.run" : job === "settle.reservation" ? "worker: settlement hand-off" : `send ${job}`;
  if (isPgConnect) return `${gw ? "gateway" : "worker"}: pool connect`;
  if (isRedis) {
    if (s.name.toLowerCase().includes("publish")) return "worker: completion notice";
    if (!gw && /bzpopmin|movetoactive|evalsha|moveto/i.test(s.name)) return null;
    return `${gw ? "gateway" : "worker"}: redis ${s.name.toLowerCase()}`;
  }
  if (s.kind === 3 /* client */ && !isPg && !isRedis && !gw) return "worker: source call (http)";
  if (!isPg) return null;
  const q = statement(s);
  if (gw) {
    if (/INSERT INTO lookups/i.test(q)) return "gateway: insert lookup + rows";
    if (/INSERT INTO reservations|UPDATE accounts|UPDATE api_keys|^BEGIN|^COMMIT|^ROLLBACK|reserv/i.test(q)) return "gateway: reservation (BEGIN, reserve, COMMIT)";
    if (/FROM lookups l/i.test(q)) return "gateway: read lookup";
    if (/announced_pending/i.test(q)) return "gateway: announce pending";
    if (process.env.BENCH_DEBUG) process.stderr.write(`gateway other: ${q.slice(0, 120)}\n`);
    return `gateway: other sql`;
  }
  if (/SET attempts = attempts \+ 1/i.test(q)) return "worker: claim (lease)";
  if (/pending_checks > 0/i.test(q)) return "worker: read pending rows";
  if (/check_cache/i.test(q) && !/INSERT/i.test(q)) return "worker: cache read";
  if (/INSERT INTO check_cache/i.test(q)) return "worker: cache write";
  if (/^BEGIN|^COMMIT|status = 'completed'|UPDATE result_rows|FROM reservations|INSERT INTO events/i.test(q)) return "worker: complete (transaction)";
  if (process.env.BENCH_DEBUG) process.stderr.write(`worker other: ${q.slice(0, 120)}\n`);
  return "worker: other sql";
}

function breakdown(spans, since) {
  const byTrace = new Map();
  for (const s of spans) {
    if (!byTrace.has(s.trace)) byTrace.set(s.trace, []);
    byTrace.get(s.trace).push(s);
  }
  const rows = [];
  for (const list of byTrace.values()) {
    const root = list.find((s) => s.service === "gateway" && s.kind === 2 && /lookup/.test(s.name) && !s.parent);
    if (!root || root.start < since) continue;
    const steps = {};
    const add = (k, ms) => (steps[k] = (steps[k] ?? 0) + ms);
    const counted = [];
    const byId = new Map(list.map((s) => [s.id, s]));
    for (const s of list) {
      // A queue send's own Redis script is part of its step.
      if (byId.get(s.parent)?.kind === 4 && s.kind !== 4) continue;
      if (s === root || s.kind === 5 /* consumer */) continue;
      // The billing-ledger settles after the worker's hand-off: off the reply path (it shares the CPU, though).
      if (s.service === "billing-ledger") continue;
      const step = stepOf(s);
      if (!step) continue;
      add(step, s.end - s.start);
      counted.push([s.start, s.end]);
    }
    const send = list.find((s) => s.kind === 4 && s.attrs["svc.job.name"] === "lookup.run");
    const run = list.find((s) => s.kind === 5 && s.attrs["svc.job.name"] === "lookup.run");
    if (send && run) {
      add("worker: pick-up (queue wait)", Math.max(0, run.start - send.end));
      counted.push([send.end, run.start]);
    }
    const publish = list.find((s) => s.service === "check-worker" && s.name.toLowerCase().includes("publish"));
    if (publish) {
      const next = list.filter((s) => s.service === "gateway" && s.start >= publish.start && s !== root).sort((a, b) => a.start - b.start)[0];
      const wake = next ? next.start : root.end;
      add("gateway: wake-up after notice", Math.max(0, wake - publish.end));
      counted.push([publish.end, wake]);
    }
    // What no counted span covers between the request's start and its end: in-process work.
    counted.sort((a, b) => a[0] - b[0]);
    let covered = 0;
    let cur = null;
    for (const [a0, b0] of counted) {
      const a = Math.max(a0, root.start);
      const b = Math.min(b0, root.end);
      if (b <= a) continue;
      if (!cur || a > cur[1]) {
        if (cur) covered += cur[1] - cur[0];
        cur = [a, b];
      } else cur[1] = Math.max(cur[1], b);
    }
    if (cur) covered += cur[1] - cur[0];
    steps["in process (no span)"] = root.end - root.start - covered;
    steps["round trip (server span)"] = root.end - root.start;
    rows.push(steps);
  }
  return rows;
}

const pct = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};


// ---- fleet ----
// Whatever ends this script kills what it started; a service dying on its own ends the run.
const fleet = new Fleet({ onExit: "SIGKILL", failFast: true });
/**
 * For a build with per-service roles and Redis users: makes them (its own scripts, on the
 * bench database and this fleet's prefix) and returns each service's connection settings.
 * Null for a build from before issue 20.
 */
function leastPrivilege(root, env) {
  if (!existsSync(path.join(root, "scripts", "db-deploy.mjs"))) return null;
  const withCredentials = { ...env, ...serviceCredentialSettings(env) };
  for (const script of [["scripts/db-deploy.mjs"], ["scripts/redis-acl.mjs", "--apply"]]) {
    const r = spawnSync(process.execPath, [path.join(root, script[0]), ...script.slice(1)], { cwd: root, env: withCredentials, stdio: ["ignore", "ignore", "inherit"] });
    if (r.status !== 0) throw new Error(`${script[0]} failed`);
  }
  return serviceConnections(env);
}

async function startFleet({ root, asOwner }, traced, receiverPort) {
  const prefix = `bench-lat-${randomBytes(3).toString("hex")}`;
  const simPort = port + 1;
  const sim = await fleet.startService("vendor-simulator", { root, env: { ...process.env, SIM_PORT: String(simPort), SIM_LATENCY_MS: "0" }, stdout: "ignore", stderr: "inherit", ready: null });
  const env = {
    ...process.env,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: "warn",
    PORT: String(port),
    WEB_CONCURRENCY: "1",
    VENDOR_PRIMARY_URL: `http://127.0.0.1:${simPort}`,
    VENDOR_PRIMARY_KEY: "sim-key",
    VENDOR_RETRIES: "0",
    CONCURRENCY: "50",
    METRICS_PORT: "",
  };
  if (traced) {
    env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${receiverPort}`;
    env.OTEL_TRACES_SAMPLER = "always_on";
    env.OTEL_BSP_SCHEDULE_DELAY = "200";
    env.OTEL_BSP_MAX_QUEUE_SIZE = "100000";
  } else {
    delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  }
  const profile = process.env.BENCH_PROFILE;
  const own = asOwner ? null : leastPrivilege(root, env);
  const members = { simulator: sim };
  for (const name of ["gateway", "check-worker", "billing-ledger"]) {
    const flags = (profile ?? "").split(",").includes(name) && !traced ? ["--cpu-prof", `--cpu-prof-dir=/tmp/lat14-profiles/${path.basename(root)}`] : [];
    // Service logs (warn and above) on our stderr.
    members[name] = await fleet.startService(name, { root, nodeFlags: flags, env: { ...env, ...own?.[name], OTEL_SERVICE_NAME: name }, keep: 0, onLine: (line) => process.stderr.write(`${line}\n`), stderr: "inherit", ready: null });
  }
  // Up when a lookup is answered 200 (the gateway listens, the worker has advertised its routes).
  for (let i = 0; ; i += 1) {
    try {
      await lookupOnce();
      break;
    } catch (err) {
      if (i >= 120) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    /** CPU ms used so far by each service (the simulator too), children included. */
    cpu: () => Object.fromEntries(Object.entries(members).map(([name, p]) => [name, cpuSeconds(p.pid) * 1000])),
    stop: () => fleet.stop({ graceMs: 8_000 }),
  };
}

const { keys } = await seedAccount(process.env.DATABASE_URL, { keyHashSecret: process.env.KEY_HASH_SECRET, mode: "live", count: 200, name: "bench-live-latency", balanceMicros: 1_000_000_000_000n });

let keyNo = 0;
const randomNumber = () => `+1212${String(2_000_000 + Math.floor(Math.random() * 7_999_999)).padStart(7, "0")}`;
const bodyOf = (count) => JSON.stringify({ numbers: Array.from({ length: count }, randomNumber), checks: ["whatsapp"], wait: 10 });
const agent = new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 4 });

let seqKey = 0;
function lookupOnce() {
  const body = bodyOf(1);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/v1/lookup", method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${keys[seqKey++ % 10]}` } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          else resolve(ms);
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function sequential(n) {
  const times = [];
  for (let i = 0; i < n; i += 1) times.push(await lookupOnce());
  return times;
}

async function paced(rate, duration, count, connections) {
  let fails = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/v1/lookup`,
    connections,
    duration,
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: "POST",
        setupRequest: (req) => ({ ...req, headers: { "content-type": "application/json", authorization: `Bearer ${keys[keyNo++ % keys.length]}` }, body: bodyOf(count) }),
        onResponse: (status) => {
          if (status !== 200) fails += 1;
        },
      },
    ],
  });
  return { perS: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, notOk: fails + result.errors + result.timeouts };
}

// ---- the OTLP receiver ----
const collected = [];
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    let buf = Buffer.concat(chunks);
    if (req.headers["content-encoding"] === "gzip") buf = gunzipSync(buf);
    try {
      decodeTraces(buf, collected);
    } catch (err) {
      process.stderr.write(`undecodable OTLP body: ${err.message}\n`);
    }
    res.writeHead(200, { "content-type": "application/x-protobuf" });
    res.end();
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverPort = receiver.address().port;

const results = builds.map(() => ({ steps: [], seq: [], rate: [], wide: [] }));
for (let cycle = 0; cycle < Number(values.cycles); cycle += 1) {
  for (let k = 0; k < builds.length; k += 1) {
    const b = (k + cycle) % builds.length;
    const build = builds[b];
    const r = results[b];
    if (!values.only || values.only.includes("traced")) {
      collected.length = 0;
      const fleet = await startFleet(build, true, receiverPort);
      await sequential(30); // warm-up: pools, prepared statements, JIT
      await new Promise((res) => setTimeout(res, 1_000));
      collected.length = 0;
      const since = Date.now();
      await sequential(Number(values.traced));
      await fleet.stop();
      r.steps.push(...breakdown(collected, since));
    }
    if (!values.only || values.only.includes("plain")) {
      const fleet = await startFleet(build, false);
      await sequential(50);
      r.seq.push(...(await sequential(Number(values.sequential))));
      if (Number(values.rate) > 0) {
        await paced(Number(values.rate), 2, 1, 64);
        r.rate.push(await paced(Number(values.rate), Number(values["rate-duration"]), 1, 64));
      }
      if (Number(values["wide-duration"]) > 0) {
        await paced(0, 3, 10, Number(values["wide-connections"]));
        const before = fleet.cpu();
        const wide = await paced(0, Number(values["wide-duration"]), 10, Number(values["wide-connections"]));
        const after = fleet.cpu();
        const lookups = wide.perS * Number(values["wide-duration"]);
        wide.cpuPerLookup = Object.fromEntries(Object.keys(after).map((k) => [k, +((after[k] - before[k]) / lookups).toFixed(2)]));
        r.wide.push(wide);
      }
      await fleet.stop();
    }
    process.stderr.write(`cycle ${cycle + 1}: ${build.label} done\n`);
  }
}
receiver.close();
agent.destroy();

const median = (xs) => pct(xs, 50);
const out = { command: `node bench/live-latency.mjs ${process.argv.slice(2).join(" ")}`.trim(), builds: {} };
const allSteps = new Set(results.flatMap((r) => r.steps.flatMap((s) => Object.keys(s))));
results.forEach((r, b) => {
  const steps = {};
  for (const name of [...allSteps].sort()) {
    const xs = r.steps.map((s) => s[name] ?? 0);
    steps[name] = { p50: +pct(xs, 50)?.toFixed(2), p99: +pct(xs, 99)?.toFixed(2) };
  }
  out.builds[builds[b].label] = {
    traced_lookups: r.steps.length,
    steps,
    unloaded_round_trip_ms: r.seq.length ? { n: r.seq.length, min: +pct(r.seq, 0).toFixed(2), p10: +pct(r.seq, 10).toFixed(2), p50: +pct(r.seq, 50).toFixed(2), p90: +pct(r.seq, 90).toFixed(2), p99: +pct(r.seq, 99).toFixed(2) } : null,
    paced: r.rate.length ? { rate: Number(values.rate), per_s: r.rate.map((x) => Math.round(x.perS)), p50_ms: r.rate.map((x) => x.p50), p99_ms: r.rate.map((x) => x.p99), not_ok: r.rate.map((x) => x.notOk) } : null,
    ten_numbers: r.wide.length
      ? { checks_per_s: r.wide.map((x) => Math.round(x.perS * 10)), p99_ms: r.wide.map((x) => x.p99), not_ok: r.wide.map((x) => x.notOk), cpu_ms_per_lookup: r.wide.map((x) => x.cpuPerLookup) }
      : null,
  };
});
if (builds.length > 1) {
  const first = results[0];
  out.ratios_to_first = Object.fromEntries(
    results.slice(1).map((r, i) => [
      builds[i + 1].label,
      {
        unloaded_p50: r.seq.length ? +(pct(r.seq, 50) / pct(first.seq, 50)).toFixed(2) : null,
        unloaded_p99: r.seq.length ? +(pct(r.seq, 99) / pct(first.seq, 99)).toFixed(2) : null,
        // Per cycle: each build's checks/s over the first build's in the same cycle.
        ten_number_checks_per_s: r.wide.map((x, c) => +(x.perS / first.wide[c].perS).toFixed(2)),
        ten_number_checks_per_s_median: r.wide.length ? +median(r.wide.map((x, c) => x.perS / first.wide[c].perS)).toFixed(2) : null,
      },
    ]),
  );
}
console.log(JSON.stringify(out, null, 2));
process.exit(0);
