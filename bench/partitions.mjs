#!/usr/bin/env node
// Result pages and downloads on result_rows partitioned by month (issue 15,
// docs/partitioning.md) against the layout before partitioning, in the same run: two
// scratch databases holding the same rows.
//
//   flock /tmp/bench.lock node bench/partitions.mjs [--jobs 100] [--rows 50000] [--months 5] [--pages 3000] [--downloads 12] [--keep]
//
//   before  migrations up to 20261126100000 (one result_rows table), queried with the
//           previous release's statements (no id_month).
//   after   every migration (result_rows partitioned by id_month), queried with today's
//           store function (jobRowsPage) and the download's statement.
// The jobs' ids are time-ordered ids spread over `--months` months (the same strings in
// both databases), so the partitioned table holds that many filled month partitions.
// Pages: a random job, a random cursor, 100 rows (GET /v1/jobs/{id}/results), and the
// same with a filter on one check's answer; downloads: every row of a random job
// streamed through pg-query-stream in batches of 1,000 and rendered as CSV lines, as
// GET /v1/jobs/{id}/download does. Before and after alternate, one request at a time.
import { parseArgs } from "node:util";
import { createRequire } from "node:module";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { ROOT } from "../scripts/lib.mjs";

const require = createRequire(import.meta.url);
const store = require(path.join(ROOT, "packages/store/dist/index.js"));
const { newId, idMonth } = require(path.join(ROOT, "packages/domain/dist/index.js"));
const QueryStream = require(require.resolve("pg-query-stream", { paths: [path.join(ROOT, "services/gateway")] }));

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "100" },
    rows: { type: "string", default: "50000" },
    months: { type: "string", default: "5" },
    pages: { type: "string", default: "3000" },
    downloads: { type: "string", default: "12" },
    keep: { type: "boolean", default: false },
  },
});
const JOBS = Number(values.jobs);
const ROWS = Number(values.rows);
const MONTHS = Number(values.months);

const ADMIN = process.env.BENCH_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const urlOf = (db) => Object.assign(new URL(ADMIN), { pathname: `/${db}` }).toString();
const MIGRATIONS = path.join(ROOT, "prisma", "migrations");
const migrations = readdirSync(MIGRATIONS).filter((m) => /^\d{14}_/.test(m)).sort();
const LAST_BEFORE = "20261126100000_result_rows_job_fill";
const layouts = {
  before: { db: "svc_bench_part_before", migrations: migrations.slice(0, migrations.indexOf(LAST_BEFORE) + 1) },
  after: { db: "svc_bench_part_after", migrations },
};

const log = (...a) => console.error(...a);
async function admin(sql) {
  const c = new pg.Client({ connectionString: ADMIN });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

// The same jobs in both: time-ordered ids, MONTHS months ending with the current one.
const now = new Date();
const jobs = Array.from({ length: JOBS }, (_, i) => {
  const m = MONTHS - 1 - (i % MONTHS);
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - m, 1 + (i % 27), 12));
  return newId("job", 22, at);
});

// A row as a live job stores it: two checks' answers (~420 bytes).
const rowSql = (withMonth) => `
  INSERT INTO result_rows (job_id, ${withMonth ? "id_month, " : ""}row_no, kind, input_masked, e164, country, number_status, checks, pending_checks)
  SELECT $1, ${withMonth ? "$3::date, " : ""}n, 'number', '+1 20* *** **' || lpad((n % 100)::text, 2, '0'), '+1202' || lpad(n::text, 7, '0'), 'US', 'valid',
    jsonb_build_array(
      jsonb_build_object('service', 'number.spam', 'status', 'ok', 'registered', n % 3 = 0, 'attributes', jsonb_build_object('score', n % 100, 'line_type', 'mobile', 'carrier', 'Example Wireless'),
                         'cached', false, 'billed', true, 'checked_at', '2026-11-20T10:00:00.000Z'),
      jsonb_build_object('service', 'whatsapp', 'status', 'ok', 'registered', n % 2 = 0, 'attributes', NULL, 'cached', false, 'billed', true, 'checked_at', '2026-11-20T10:00:00.000Z')),
    0
  FROM generate_series(1, $2::int) AS n`;

async function build(name, layout) {
  await admin(`DROP DATABASE IF EXISTS "${layout.db}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${layout.db}"`);
  const pool = new pg.Pool({ connectionString: urlOf(layout.db), max: 2 });
  for (const m of layout.migrations) await pool.query(readFileSync(path.join(MIGRATIONS, m, "migration.sql"), "utf8"));
  const partitioned = name === "after";
  if (partitioned) for (const id of jobs) await store.ensureMonthPartitions(pool, new Date(`${idMonth(id)}T00:00:00Z`), 0);
  const started = performance.now();
  for (const [i, id] of jobs.entries()) {
    await pool.query(rowSql(partitioned), partitioned ? [id, ROWS, idMonth(id)] : [id, ROWS]);
    if ((i + 1) % 20 === 0) log(`  ${name}: ${(i + 1) * ROWS} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await pool.query("VACUUM ANALYZE");
  const { rows } = await pool.query(
    `SELECT count(*)::int AS partitions, pg_size_pretty(sum(pg_total_relation_size(c.oid))) AS size
     FROM pg_class c WHERE c.relkind = 'r' AND (c.relname = 'result_rows' OR c.relname LIKE 'result_rows\\_%')`,
  );
  log(`  ${name}: ${rows[0].partitions} table(s), ${rows[0].size}`);
  return pool;
}

// The previous release's statements (packages/store/src/jobs.ts and the gateway's download.ts at 0c905d9).
const beforePage = (pool, jobId, after, limit, filter) =>
  pool.query(
    `SELECT r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks
     FROM result_rows r WHERE r.job_id = $1 AND r.row_no > $2 ${filter ? `AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.checks) c WHERE c->>'service' = $4 AND (c->>'registered')::boolean = $5)` : ""}
     ORDER BY r.row_no LIMIT $3`,
    filter ? [jobId, after, limit, filter.service, filter.registered] : [jobId, after, limit],
  );
const afterPage = (pool, jobId, after, limit, filter) => store.jobRowsPage(pool, jobId, after, limit, filter);
const DOWNLOAD = {
  before: ["SELECT row_no, kind, input_masked, e164, country, number_status, email, email_status, checks FROM result_rows WHERE job_id = $1 ORDER BY row_no", (id) => [id]],
  after: ["SELECT row_no, kind, input_masked, e164, country, number_status, email, email_status, checks FROM result_rows WHERE job_id = $1 AND id_month = $2 ORDER BY row_no", (id) => [id, idMonth(id)]],
};

const csv = (v) => (v === null || v === undefined ? "" : /[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
async function download(pool, name, jobId) {
  const client = await pool.connect();
  try {
    const [text, params] = DOWNLOAD[name];
    const stream = client.query(new QueryStream(text, params(jobId), { batchSize: 1_000 }));
    let bytes = 0;
    let rows = 0;
    for await (const r of stream) {
      const line = [r.row_no, csv(r.input_masked), csv(r.e164), csv(r.country), csv(r.number_status), ...r.checks.flatMap((c) => [c.status, c.registered ?? ""])].join(",") + "\r\n";
      bytes += Buffer.byteLength(line);
      rows += 1;
    }
    if (rows !== ROWS) throw new Error(`download of ${jobId} gave ${rows} rows`);
    return bytes;
  } finally {
    client.release();
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const pick = () => jobs[Math.floor(Math.random() * jobs.length)];

log(`building two databases of ${JOBS} jobs x ${ROWS} rows (${((JOBS * ROWS) / 1e6).toFixed(1)} M rows) over ${MONTHS} months`);
const pools = { before: await build("before", layouts.before), after: await build("after", layouts.after) };
const page = { before: beforePage, after: afterPage };

// The plans, once: the partitioned statement reads one partition.
const explain = await pools.after.query(`EXPLAIN (FORMAT JSON) ${DOWNLOAD.after[0]}`, DOWNLOAD.after[1](jobs[0]));
const relations = JSON.stringify(explain.rows[0]["QUERY PLAN"]).match(/"Relation Name":"[^"]+"/g);
log(`  after: the download's plan reads ${relations?.join(", ")}`);

const results = {};
for (const [label, filter] of [["page", null], ["filtered page", { service: "whatsapp", registered: true }]]) {
  const times = { before: [], after: [] };
  const n = Number(values.pages);
  for (let i = 0; i < n + 200; i += 1) {
    const job = pick();
    const cursor = Math.floor(Math.random() * (ROWS - 200));
    for (const name of i % 2 ? ["before", "after"] : ["after", "before"]) {
      const t = performance.now();
      const res = await page[name](pools[name], job, cursor, 100, filter);
      const ms = performance.now() - t;
      const got = res.rows ?? res;
      if (got.length === 0) throw new Error(`empty ${label} from ${name}`);
      if (i >= 200) times[name].push(ms);
    }
  }
  results[label] = times;
}
const downloads = { before: [], after: [] };
let bytes = 0;
for (let i = 0; i < Number(values.downloads) + 2; i += 1) {
  const job = pick();
  for (const name of i % 2 ? ["before", "after"] : ["after", "before"]) {
    const t = performance.now();
    bytes = await download(pools[name], name, job);
    if (i >= 2) downloads[name].push(performance.now() - t);
  }
}
results.download = downloads;

const table = [["", "before p50 ms", "after p50 ms", "after/before p50", "before p99 ms", "after p99 ms", "after/before p99"]];
for (const [label, t] of Object.entries(results)) {
  const b50 = pct(t.before, 50);
  const a50 = pct(t.after, 50);
  const b99 = pct(t.before, 99);
  const a99 = pct(t.after, 99);
  table.push([label, b50.toFixed(2), a50.toFixed(2), (a50 / b50).toFixed(2), b99.toFixed(2), a99.toFixed(2), (a99 / b99).toFixed(2)]);
}
console.log(`result_rows: ${JOBS} jobs x ${ROWS} rows over ${MONTHS} months; pages ${values.pages} each (100 rows), downloads ${values.downloads} each (${ROWS} rows, ${(bytes / 1e6).toFixed(1)} MB of CSV)`);
for (const r of table) console.log(`| ${r.join(" | ")} |`);
console.log(`download rows/s (p50): before ${Math.round(ROWS / (pct(downloads.before, 50) / 1000))}, after ${Math.round(ROWS / (pct(downloads.after, 50) / 1000))}`);

await pools.before.end();
await pools.after.end();
if (!values.keep) for (const l of Object.values(layouts)) await admin(`DROP DATABASE IF EXISTS "${l.db}" WITH (FORCE)`);
