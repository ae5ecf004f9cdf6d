#!/usr/bin/env node
// The schema owner's month-partition upkeep (docs/partitioning.md, docs/security.md):
// makes the coming months' partitions and drops the months wholly past retention
// (DETACH ... CONCURRENTLY, then DROP), which only the tables' owner may do. No
// service's role owns a table: the check-worker makes coming months through a
// function of the owner's and deletes expired rows, and deletes a month's rows one by
// one itself once its drop is a day overdue, so retention holds if this never runs.
//
//   node scripts/partition-upkeep.mjs              once, then exit
//   node scripts/partition-upkeep.mjs --every 3600  every hour until SIGTERM/SIGINT
//
// DATABASE_URL: the schema owner (the migration's). Kubernetes runs it as an hourly
// CronJob, compose as a service, `npm run up` beside the fleet. On SIGTERM a wait for a
// lock is cancelled and the run ends; the next run finishes a detach left pending.
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import pg from "pg";

const require = createRequire(import.meta.url);
const { maintainPartitions } = require("../packages/store/dist/partitions.js");

const { values } = parseArgs({ options: { every: { type: "string" } } });
const everyMs = values.every === undefined ? 0 : Number(values.every) * 1000;
if (values.every !== undefined && !(everyMs >= 60_000)) {
  process.stderr.write("partition-upkeep: --every takes seconds, at least 60\n");
  process.exit(1);
}

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/svc_validate", max: 2, application_name: "partition-upkeep" });
pool.on("error", () => undefined); // an idle connection lost: the next run connects again
const stopping = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"]) process.once(signal, () => stopping.abort());

const log = (fields) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), service: "partition-upkeep", ...fields })}\n`);

async function runOnce() {
  try {
    const { created, dropped } = await maintainPartitions(pool, new Date(), stopping.signal);
    log({ msg: "partition upkeep done", created, dropped });
    return true;
  } catch (err) {
    if (stopping.signal.aborted) return true;
    // The message only: no statement parameters, no connection string.
    log({ level: "error", msg: "partition upkeep failed; retried at the next run", err: String(err?.message ?? err) });
    return false;
  }
}

let ok = await runOnce();
while (everyMs > 0 && !stopping.signal.aborted) {
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, everyMs);
    stopping.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (!stopping.signal.aborted) ok = await runOnce();
}
await pool.end();
process.exit(ok ? 0 : 1);
