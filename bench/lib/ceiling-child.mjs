#!/usr/bin/env node
// Child processes of bench/lib/ceilings.mjs, one file for both kinds, so each ceiling
// runs with the same process shape as the service it bounds:
//
//   node bench/lib/ceiling-child.mjs http      a bare node:http cluster (CEILING_PROCESSES
//                                             processes, like the gateway's WEB_CONCURRENCY) answering
//                                             a small JSON body; prints {"port":N} once every process listens
//   node bench/lib/ceiling-child.mjs insert    one process of the insert ceiling: a pg.Pool of
//                                             CEILING_POOL_SIZE (the gateway's DATABASE_POOL_SIZE) with
//                                             as many concurrent single-row JSONB inserts; counts the
//                                             inserts that finish inside [START_AT + WARMUP_MS, + DURATION_MS)
//   node bench/lib/ceiling-child.mjs express   the least an Express gateway can do per test lookup: a cluster of
//                                             CEILING_PROCESSES processes, express.json(), and one row per request
//                                             group-committed into the scratch table (a pg.Pool of CEILING_POOL_SIZE,
//                                             at most 2 batches of at most 64 in flight, as the gateway's test
//                                             lookups); prints {"port":N} once every process listens
import cluster from "node:cluster";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";

const require = createRequire(import.meta.url);
const mode = process.argv[2];

/**
 * Runs `serve()` (an http.Server, not listening yet) in CEILING_PROCESSES processes on one
 * port (a cluster when more than one, as the gateway's WEB_CONCURRENCY) and prints
 * {"port":N} once every process listens.
 */
function serveOnProcesses(serve) {
  const processes = Number(process.env.CEILING_PROCESSES ?? 1);
  if (processes <= 1) {
    const server = serve().listen(0, "127.0.0.1", () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
  } else if (cluster.isPrimary) {
    let listening = 0;
    for (let i = 0; i < processes; i += 1) {
      cluster.fork().on("message", (m) => {
        listening += 1;
        // listen(0) in cluster workers: the primary hands every worker the same port.
        if (listening === processes) process.stdout.write(`${JSON.stringify({ port: m.port })}\n`);
      });
    }
    process.on("SIGTERM", () => {
      for (const w of Object.values(cluster.workers ?? {})) w?.kill();
      process.exit(0);
    });
  } else {
    const server = serve().listen(0, "127.0.0.1", () => process.send({ port: server.address().port }));
  }
}

if (mode === "http") {
  const ANSWER = JSON.stringify({ object: "lookup", id: "lkp_ceiling000000000000", status: "completed", livemode: false, results: [{ number: "+12125550123", valid: true, checks: [] }] });
  serveOnProcesses(() => {
    const server = createServer((req, res) => {
      const chunks = [];
      req.on("data", (d) => chunks.push(d));
      req.on("end", () => {
        if (chunks.length > 0) JSON.parse(Buffer.concat(chunks).toString("utf8")); // read the request as a JSON API would
        res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(ANSWER) });
        res.end(ANSWER);
      });
    });
    server.keepAliveTimeout = 65_000;
    return server;
  });
} else if (mode === "insert") {
  const pg = require("pg");
  const poolSize = Number(process.env.CEILING_POOL_SIZE ?? 10);
  const startAt = Number(process.env.START_AT);
  const from = startAt + Number(process.env.WARMUP_MS ?? 2000);
  const until = from + Number(process.env.DURATION_MS ?? 10000);
  // The gateway's pool settings (packages/store/src/db.ts): max = DATABASE_POOL_SIZE, 5 s connect timeout, 30 s idle.
  const pool = new pg.Pool({ connectionString: process.env.CEILING_DATABASE_URL, max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000, application_name: "bench-ceiling" });
  pool.on("error", () => undefined);
  const body = JSON.stringify({ number: "+12125550123", checks: ["number.spam"], answer: { status: "completed", spam_score: 12, reports: 0 } });
  let count = 0;
  const latencies = [];
  const loop = async () => {
    for (;;) {
      const now = Date.now();
      if (now >= until) return;
      const t0 = performance.now();
      // A named prepared statement, as the gateway's lookup insert is.
      await pool.query({ name: "ceiling_insert", text: "INSERT INTO ceiling_insert (body) VALUES ($1::jsonb)", values: [body] });
      const t1 = Date.now();
      if (t1 >= from && t1 < until) {
        count += 1;
        if (latencies.length < 200_000) latencies.push(performance.now() - t0);
      }
    }
  };
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  await Promise.all(Array.from({ length: poolSize }, loop));
  await pool.end();
  process.stdout.write(`${JSON.stringify({ count, latencies })}\n`);
} else if (mode === "express") {
  serveOnProcesses(() => {
    const express = require("express");
    const pg = require("pg");
    const pool = new pg.Pool({ connectionString: process.env.CEILING_DATABASE_URL, max: Number(process.env.CEILING_POOL_SIZE ?? 10), application_name: "bench-ceiling" });
    pool.on("error", () => undefined);
    // Group commit as services/gateway/src/lookups/test-batch.ts: the first write goes out alone,
    // later ones wait for one of 2 slots and leave together (at most 64).
    const queue = [];
    let inFlight = 0;
    const pump = () => {
      while (inFlight < 2 && queue.length > 0) {
        const batch = queue.splice(0, 64);
        inFlight += 1;
        pool
          .query({ name: "ceiling_express", text: "INSERT INTO ceiling_insert (body) SELECT b FROM jsonb_array_elements($1::jsonb) AS b", values: [JSON.stringify(batch.map((e) => e.body))] })
          .then(() => batch.forEach((e) => e.resolve()), (err) => batch.forEach((e) => e.reject(err)))
          .finally(() => {
            inFlight -= 1;
            pump();
          });
      }
    };
    const app = express();
    app.use(express.json());
    app.post("/", (req, res) => {
      const body = { number: req.body.numbers?.[0], checks: req.body.checks, answer: { status: "completed", spam_score: 12, reports: 0 } };
      new Promise((resolve, reject) => {
        queue.push({ body, resolve, reject });
        pump();
      }).then(
        () => res.json({ object: "lookup", id: "lkp_ceiling000000000000", status: "completed", livemode: false, results: [{ number: body.number, valid: true, checks: [] }] }),
        () => res.status(500).json({ error: { code: "internal_error" } }),
      );
    });
    const server = createServer(app);
    server.keepAliveTimeout = 65_000;
    return server;
  });
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
