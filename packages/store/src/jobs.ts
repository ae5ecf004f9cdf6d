import type { Readable } from "node:stream";
import type pg from "pg";
import QueryStream from "pg-query-stream";
import { idMonth, type CheckResult } from "@svc/domain";
import type { Sql } from "./db";
import type { LeaseRenewal } from "./lease";
import type { StoredRow } from "./stored-row";
import { copyRenderedRows, type RowsCopy } from "./result-rows-copy";
import { settleReservation, type SettlementResult } from "./settlement";

export type JobStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];

export type JobRecord = {
  id: string;
  account_id: string;
  api_key_id: string;
  livemode: boolean;
  status: JobStatus;
  checks: string[];
  total: number;
  checks_total: number;
  done: number;
  conclusive: number;
  non_billable: number;
  chunk_count: number;
  max_cost_micros: bigint | null;
  estimate: Record<string, unknown>;
  webhook_endpoint_id: string | null;
  progress_events: boolean;
  last_progress_at: Date | null;
  failure_code: string | null;
  failure_message: string | null;
  results_url: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  cancelled_at: Date | null;
  purged_at: Date | null;
  expires_at: Date;
  reserved_micros: bigint;
  charged_micros: bigint;
};

const JOB_BASE_COLUMNS = `j.id, j.account_id, j.api_key_id, j.livemode, j.status, j.checks, j.total, j.checks_total, j.done, j.conclusive,
  j.non_billable, j.chunk_count, j.max_cost_micros, j.estimate, j.webhook_endpoint_id, j.progress_events, j.last_progress_at,
  j.failure_code, j.failure_message, j.results_url, j.created_at, j.started_at, j.finished_at, j.cancelled_at, j.purged_at, j.expires_at`;

/** The job with its money (from its reservation). */
const JOB_COLUMNS = `${JOB_BASE_COLUMNS},
  COALESCE(r.amount_micros - r.charged_micros - r.released_micros, 0)::bigint AS reserved_micros,
  COALESCE(r.charged_micros, 0)::bigint AS charged_micros`;

export type NewJob = {
  id: string;
  accountId: string;
  apiKeyId: string;
  livemode: boolean;
  status: JobStatus;
  checks: string[];
  checksTotal: number;
  counters: { done: number; conclusive: number; nonBillable: number };
  maxCostMicros: bigint | null;
  estimate: Record<string, unknown>;
  webhookEndpointId: string | null;
  progressEvents: boolean;
  resultsUrl: string;
  requestId: string;
  createdAt: Date;
  finishedAt: Date | null;
  expiresAt: Date;
  /** The job's rows, rendered for COPY (renderRowsCopy). */
  rows: RowsCopy;
  /** Rows per chunk of work (live jobs); 0 = no chunks (test jobs are answered at once). */
  chunkSize: number;
};

/**
 * Stores a job, its rows (one COPY) and, for live jobs, its chunks of work, in the
 * caller's transaction. The only writer of a job's rows: result_rows.job_id has no
 * foreign key (its per-row check was a quarter of a 50,000-row COPY), so rows name an
 * existing job because they are copied right after the job's INSERT, in its
 * transaction. Deleting a job deletes its rows (trigger jobs_delete_result_rows).
 */
export async function insertJob(client: pg.PoolClient, j: NewJob): Promise<void> {
  const chunkCount = j.chunkSize > 0 ? Math.ceil(j.rows.count / j.chunkSize) : 0;
  await client.query(
    `INSERT INTO jobs (id, account_id, api_key_id, livemode, status, checks, total, checks_total, done, conclusive, non_billable,
                       chunk_count, max_cost_micros, estimate, webhook_endpoint_id, progress_events, request_id, created_at,
                       started_at, finished_at, expires_at, results_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`,
    [
      j.id, j.accountId, j.apiKeyId, j.livemode, j.status, j.checks, j.rows.count, j.checksTotal, j.counters.done, j.counters.conclusive,
      j.counters.nonBillable, chunkCount, j.maxCostMicros?.toString() ?? null, JSON.stringify(j.estimate), j.webhookEndpointId, j.progressEvents,
      j.requestId, j.createdAt, j.finishedAt ? j.createdAt : null, j.finishedAt, j.expiresAt, j.resultsUrl,
    ],
  );
  await copyRenderedRows(client, j.rows);
  if (chunkCount > 0) {
    await client.query(
      `INSERT INTO job_chunks (job_id, chunk_no, first_row, last_row)
       SELECT $1, n, n * $2 + 1, LEAST((n + 1) * $2, $3) FROM generate_series(0, $4 - 1) AS n`,
      [j.id, j.chunkSize, j.rows.count, chunkCount],
    );
  }
}

export type JobScope = { accountId: string; livemode: boolean; apiKeyId: string | null };

/** A job of the account and mode (and key, for `jobs:read` without `jobs:read_all`), or null. */
export async function getJob(sql: Sql, id: string, scope: JobScope, now: Date): Promise<JobRecord | null> {
  const { rows } = await sql.query<JobRecord>(
    `SELECT ${JOB_COLUMNS} FROM jobs j LEFT JOIN reservations r ON r.job_id = j.id
     WHERE j.id = $1 AND j.account_id = $2 AND j.livemode = $3 AND ($4::text IS NULL OR j.api_key_id = $4) AND j.expires_at > $5`,
    [id, scope.accountId, scope.livemode, scope.apiKeyId, now],
  );
  return rows[0] ?? null;
}

export type RowFilter = { service: string; registered?: boolean | null | undefined; status?: string | undefined; kind?: "number" | "email" };

/** One page of a job's rows in input order after `afterRowNo`, optionally filtered on one service's answer. */
export async function jobRowsPage(sql: Sql, jobId: string, afterRowNo: number, limit: number, filter: RowFilter | null): Promise<StoredRow[]> {
  const conditions: string[] = [];
  // $4: the job's partition (docs/partitioning.md), so only it is read.
  const params: unknown[] = [jobId, afterRowNo, limit, idMonth(jobId)];
  if (filter && (filter.registered !== undefined || filter.status !== undefined)) {
    params.push(filter.service);
    const svc = `$${params.length}`;
    const inner: string[] = [`c->>'service' = ${svc}`];
    if (filter.registered !== undefined) {
      if (filter.registered === null) inner.push(`(c->'registered') = 'null'::jsonb`);
      else {
        params.push(filter.registered);
        inner.push(`(c->>'registered')::boolean = $${params.length}`);
      }
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      inner.push(`c->>'status' = $${params.length}`);
    }
    if (filter.kind) {
      params.push(filter.kind);
      conditions.push(`r.kind = $${params.length}`);
    }
    conditions.push(`EXISTS (SELECT 1 FROM jsonb_array_elements(r.checks) c WHERE ${inner.join(" AND ")})`);
  }
  const { rows } = await sql.query<StoredRow>(
    `SELECT r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks
     FROM result_rows r WHERE r.job_id = $1 AND r.id_month = $4 AND r.row_no > $2 ${conditions.map((c) => `AND ${c}`).join(" ")}
     ORDER BY r.row_no LIMIT $3`,
    params,
  );
  return rows;
}

/**
 * Which chunks still have work: every unfinished chunk of a live job, and a chunk
 * of a cancelled job that was already running (its rows went to a source: they
 * finish and are billed, and the job is final only when they have).
 */
const CHUNK_HAS_WORK = `(j.status IN ('queued', 'running') AND c.status IN ('queued', 'running') OR j.status = 'cancelled' AND c.status = 'running')`;

/**
 * One attempt's hold on a chunk. `attempts` is the lease token: every claim adds
 * one, so renewing, releasing and completing compare it and an attempt that lost
 * its lease can no longer touch the row.
 */
/**
 * Every row of a job in input order, streamed from a cursor `batchSize` rows at a time
 * (objects shaped as StoredRow), so memory stays flat whatever the size of the job.
 * The stream holds `client` until it ends or is destroyed; the caller releases it then.
 */
export function streamJobRows(client: pg.PoolClient, jobId: string, batchSize = 1_000): Readable {
  return client.query(
    new QueryStream(
      `SELECT row_no, kind, input_masked, e164, country, number_status, email, email_status, checks FROM result_rows WHERE job_id = $1 AND id_month = $2 ORDER BY row_no`,
      // The job's partition alone (docs/partitioning.md).
      [jobId, idMonth(jobId)],
      { batchSize },
    ),
  );
}

export type ChunkClaim = { first_row: number; last_row: number; attempts: number; leased_until: Date };

/**
 * Claims a chunk for one attempt, leased until `now + leaseMs`; null when it is
 * done, cancelled, its job will not run it, or another attempt holds a live lease
 * on it (a duplicate message, or a worker that is alive and renewing).
 */
export async function claimChunk(sql: Sql, jobId: string, chunkNo: number, now: Date, leaseMs: number): Promise<ChunkClaim | null> {
  const { rows } = await sql.query<ChunkClaim>(
    `UPDATE job_chunks c SET status = 'running', attempts = c.attempts + 1, leased_until = $3, updated_at = $4
     FROM jobs j
     WHERE c.job_id = $1 AND c.chunk_no = $2 AND j.id = c.job_id AND ${CHUNK_HAS_WORK}
       AND (c.status = 'queued' OR c.leased_until IS NULL OR c.leased_until <= $4)
     RETURNING c.first_row, c.last_row, c.attempts, c.leased_until`,
    [jobId, chunkNo, new Date(now.getTime() + leaseMs), now],
  );
  return rows[0] ?? null;
}

export type { LeaseRenewal } from "./lease";

/**
 * Extends an attempt's lease while it still holds it: the chunk is running, the
 * token is the attempt's, the lease is the one this attempt last wrote (not given
 * back or changed since) and has not run out (once it has, another worker may
 * already be starting the chunk). False means the lease is lost.
 */
export async function renewChunkLease(sql: Sql, jobId: string, chunkNo: number, r: LeaseRenewal): Promise<boolean> {
  const { rowCount } = await sql.query(
    `UPDATE job_chunks SET leased_until = $6
     WHERE job_id = $1 AND chunk_no = $2 AND status = 'running' AND attempts = $3 AND leased_until = $4 AND leased_until > $5`,
    [jobId, chunkNo, r.token, r.held, r.now, r.until],
  );
  return rowCount === 1;
}

/**
 * An attempt that failed gives its chunk back: the lease ends at `until` (its
 * failure back-off, 1 s after a first failure), when the retry or the reconciler
 * takes the chunk over, instead of whenever the lease would have run out.
 */
export async function releaseChunkLease(sql: Sql, jobId: string, chunkNo: number, token: number, until: Date): Promise<boolean> {
  const { rowCount } = await sql.query(
    `UPDATE job_chunks SET leased_until = $4 WHERE job_id = $1 AND chunk_no = $2 AND status = 'running' AND attempts = $3`,
    [jobId, chunkNo, token, until],
  );
  return rowCount === 1;
}

export async function chunkRows(
  sql: Sql,
  jobId: string,
  firstRow: number,
  lastRow: number,
): Promise<Array<{ row_no: number; kind: "number" | "email"; e164: string | null; country: string | null; email: string | null; row_status: string; checks: CheckResult[] }>> {
  // The stored country spares the worker a second parse of each number (see answer-rows.ts).
  const { rows } = await sql.query(
    `SELECT row_no, kind, e164, country, email, COALESCE(number_status, email_status) AS row_status, checks
     FROM result_rows WHERE job_id = $1 AND id_month = $4 AND row_no BETWEEN $2 AND $3 ORDER BY row_no`,
    [jobId, firstRow, lastRow, idMonth(jobId)],
  );
  return rows;
}

/**
 * A chunk's commit: the job's counters after it, whether it finished the job, and
 * the job's settlement when it did (its events, e.g. balance.low, to announce).
 */
export type ChunkOutcome = { job: JobRecord; finished: boolean; progressDue: boolean; settled: Settled } | null;

/**
 * Writes a chunk's answers and counts its progress, exactly once, and only for the
 * attempt that holds the lease: the chunk must still be `running` under this
 * attempt's token with its lease not run out (a late attempt whose lease was lost
 * or taken over writes nothing; null). The chunk row stays locked until COMMIT, so
 * a claim racing this commit waits and then finds the chunk done. The job row is
 * locked before the last-chunk check, so two chunks finishing together cannot both
 * miss that they were the last.
 */
export async function completeChunk(
  client: pg.PoolClient,
  jobId: string,
  chunkNo: number,
  token: number,
  results: Array<{ row_no: number; checks: CheckResult[] }>,
  now: Date,
): Promise<ChunkOutcome> {
  // The chunk row first (no contention between chunks); the job row — shared by
  // every chunk of the job — only at the end, so its lock is held briefly.
  const done = await client.query(
    `UPDATE job_chunks SET status = 'done', leased_until = NULL, updated_at = $3
     WHERE job_id = $1 AND chunk_no = $2 AND status = 'running' AND attempts = $4 AND leased_until > $3`,
    [jobId, chunkNo, now, token],
  );
  if (done.rowCount === 0) return null;
  let checks = 0;
  let conclusive = 0;
  for (const r of results) for (const c of r.checks) if (c.status !== "pending") {
    checks += 1;
    if (c.billed) conclusive += 1;
  }
  await client.query(
    `UPDATE result_rows r SET checks = u.checks, pending_checks = 0
     FROM jsonb_to_recordset($2::jsonb) AS u(row_no int, checks jsonb)
     WHERE r.job_id = $1 AND r.id_month = $3 AND r.row_no = u.row_no`,
    [jobId, JSON.stringify(results), idMonth(jobId)],
  );
  return finishChunkAccounting(client, jobId, checks, conclusive, now);
}

/**
 * Adds a chunk's counts to the job in one UPDATE (the job row is locked only from
 * here to COMMIT). Every check is counted exactly once, so the job is finished
 * exactly when `done` reaches `checks_total` — for a cancelled job too, whose
 * cancelled checks were counted when it was cancelled — and the chunk that
 * finishes it settles it before COMMIT (settleFinishedJob).
 */
async function finishChunkAccounting(client: pg.PoolClient, jobId: string, checks: number, conclusive: number, now: Date): Promise<ChunkOutcome> {
  const { rows } = await client.query<JobRecord & { progress_due: boolean; finished_now: boolean }>(
    `UPDATE jobs j SET done = j.done + $2, conclusive = j.conclusive + $3, non_billable = j.non_billable + ($2 - $3),
            status = CASE WHEN j.done + $2 >= j.checks_total AND j.status IN ('queued', 'running') THEN 'completed'
                          WHEN j.status = 'queued' THEN 'running' ELSE j.status END,
            started_at = COALESCE(j.started_at, $4),
            finished_at = CASE WHEN j.done + $2 >= j.checks_total THEN COALESCE(j.finished_at, $4) ELSE j.finished_at END
     WHERE j.id = $1
     RETURNING ${JOB_BASE_COLUMNS}, 0::bigint AS reserved_micros, 0::bigint AS charged_micros,
       (j.progress_events AND j.done < j.checks_total AND (j.last_progress_at IS NULL OR j.last_progress_at <= $4::timestamptz - interval '1 minute')) AS progress_due,
       (j.done >= j.checks_total) AS finished_now`,
    [jobId, checks, conclusive, now],
  );
  const row = rows[0];
  if (!row) return null;
  const { progress_due, finished_now, ...job } = row;
  const settled = finished_now ? await settleFinishedJob(client, jobId, now) : notSettled();
  return { job, finished: finished_now, progressDue: progress_due, settled };
}

/**
 * Settles a job's money in the transaction that finishes it (the last chunk's
 * commit, a cancel with nothing in flight, the last in-flight chunk of a cancelled
 * job ending, a failure): every answer is charged or released and the reservation
 * closed before COMMIT, so whoever sees the job final — a read, a long poll woken
 * after the commit, the job.completed event recorded in this same transaction —
 * also sees its final cost. Settlement is per (row, check) under the reservation's
 * lock, so a chunk's settlement by the billing-ledger, before or after, bills
 * nothing twice. Returns what was settled (nothing: the reservation was closed
 * already) and the events the settlement recorded (balance.low).
 *
 * The only way a finishing transaction settles: each store function that can
 * finish a job calls it before returning (completeChunk for the last chunk,
 * abandonCancelledChunk for the last one in flight of a cancelled job,
 * finishCancelledJob for the check-worker's `job.finish`, failJob), and the
 * check-worker, the one service whose role may write the ledger, runs them.
 * Everything else asks for a settlement after its commit (requestSettlement in
 * @svc/flows) and the billing-ledger settles it.
 */
export async function settleFinishedJob(client: pg.PoolClient, jobId: string, now: Date): Promise<Settled> {
  const { rows } = await client.query<{ id: string }>(`SELECT id FROM reservations WHERE job_id = $1 AND status = 'open'`, [jobId]);
  const settlements: SettlementResult[] = [];
  for (const r of rows) settlements.push(await settleReservation(client, r.id, now));
  return { eventIds: settlements.flatMap((r) => r.eventIds), settlements };
}

/** Notes that a `job.progress` event was recorded now (one a minute at most: finishChunkAccounting's `progress_due`). */
export async function markJobProgressAnnounced(client: pg.PoolClient, jobId: string, now: Date): Promise<void> {
  await client.query(`UPDATE jobs SET last_progress_at = $2 WHERE id = $1`, [jobId, now]);
}

/**
 * A change that may have finished, and so settled, a job: the settlements it ran
 * (none when the job is not finished yet), and their events to announce after COMMIT.
 */
export type Settled = { eventIds: string[]; settlements: SettlementResult[] };

const notSettled = (): Settled => ({ eventIds: [], settlements: [] });

export async function jobById(sql: Sql, jobId: string): Promise<JobRecord | null> {
  const { rows } = await sql.query<JobRecord>(`SELECT ${JOB_COLUMNS} FROM jobs j LEFT JOIN reservations r ON r.job_id = j.id WHERE j.id = $1`, [jobId]);
  return rows[0] ?? null;
}

/**
 * Every check of a chunk that will not run is done and free: pending ones become
 * `cancelled`, the rest (invalid, duplicate rows) were final already. Returns how
 * many checks the chunk holds (none of them counted as done before).
 */
async function cancelChunkRows(client: pg.PoolClient, jobId: string, range: { first_row: number; last_row: number }): Promise<number> {
  await client.query(
    `UPDATE result_rows SET pending_checks = 0,
       checks = (SELECT jsonb_agg(CASE WHEN c->>'status' = 'pending' THEN c || '{"status": "cancelled"}'::jsonb ELSE c END ORDER BY ord)
                 FROM jsonb_array_elements(checks) WITH ORDINALITY AS e(c, ord))
     WHERE job_id = $1 AND id_month = $4 AND row_no BETWEEN $2 AND $3 AND pending_checks > 0`,
    [jobId, range.first_row, range.last_row, idMonth(jobId)],
  );
  const { rows: n } = await client.query<{ n: number }>(
    `SELECT COALESCE(sum(jsonb_array_length(checks)), 0)::int AS n FROM result_rows WHERE job_id = $1 AND id_month = $4 AND row_no BETWEEN $2 AND $3`,
    [jobId, range.first_row, range.last_row, idMonth(jobId)],
  );
  return n[0]?.n ?? 0;
}

/**
 * Ends chunks that will not run (`ranges`): their checks are done and free. With
 * `finish`, the job is also final (and settled) once no chunk is in flight; without
 * it (a cancel by the gateway, which may not write the ledger) the job is left for
 * finishCancelledJob. `cancel` also makes the job `cancelled`. Returns the
 * settlement, and whether nothing is in flight any more.
 */
async function endChunks(client: pg.PoolClient, jobId: string, ranges: ReadonlyArray<{ first_row: number; last_row: number }>, now: Date, opts: { cancel: boolean; finish: boolean }): Promise<Settled & { idle: boolean }> {
  let checks = 0;
  for (const range of ranges) checks += await cancelChunkRows(client, jobId, range);
  const { rows } = await client.query<{ finished: boolean; idle: boolean }>(
    `WITH flight AS (SELECT EXISTS (SELECT 1 FROM job_chunks WHERE job_id = $1 AND status = 'running') AS running)
     UPDATE jobs SET done = done + $2, non_billable = non_billable + $2,
            status = CASE WHEN $4 THEN 'cancelled' ELSE status END, cancelled_at = CASE WHEN $4 THEN $3 ELSE cancelled_at END,
            finished_at = CASE WHEN $5 AND NOT flight.running THEN $3 ELSE finished_at END
     FROM flight WHERE id = $1 RETURNING finished_at IS NOT NULL AS finished, NOT flight.running AS idle`,
    [jobId, checks, now, opts.cancel, opts.finish],
  );
  const settled = rows[0]?.finished ? await settleFinishedJob(client, jobId, now) : notSettled();
  return { ...settled, idle: rows[0]?.idle ?? false };
}

/**
 * A cancelled job's in-flight chunk that cannot be finished (its processing failed
 * for good): its rows are cancelled, free, and the job ends (and settles) if it was
 * the last one in flight. Null when the job is not cancelled, the chunk is not
 * running, or (given `token`) another attempt has taken the chunk over since.
 */
export async function abandonCancelledChunk(client: pg.PoolClient, jobId: string, chunkNo: number, now: Date, token?: number): Promise<Settled | null> {
  const { rows: job } = await client.query(`SELECT status FROM jobs WHERE id = $1 FOR UPDATE`, [jobId]);
  if (job[0]?.status !== "cancelled") return null;
  const { rows } = await client.query<{ first_row: number; last_row: number }>(
    `UPDATE job_chunks SET status = 'cancelled', leased_until = NULL, updated_at = $3
     WHERE job_id = $1 AND chunk_no = $2 AND status = 'running' AND ($4::int IS NULL OR attempts = $4) RETURNING first_row, last_row`,
    [jobId, chunkNo, now, token ?? null],
  );
  if (!rows[0]) return null;
  return endChunks(client, jobId, rows, now, { cancel: false, finish: true });
}

/**
 * Cancels a running job (the gateway's half): chunks not yet sent to a source are
 * cancelled and their pending checks marked `cancelled` (free); chunks in flight
 * finish and are billed, and the last of them finishes and settles the job. With
 * nothing in flight (`idle`), finishCancelledJob finishes and settles it (the
 * check-worker, on the gateway's `job.finish` message): the gateway's role may not
 * write the ledger. Null when the job was not running.
 */
export async function cancelJob(client: pg.PoolClient, jobId: string, now: Date): Promise<{ idle: boolean } | null> {
  const { rows } = await client.query(`SELECT status FROM jobs WHERE id = $1 FOR UPDATE`, [jobId]);
  if (!["queued", "running"].includes(rows[0]?.status)) return null;
  const { rows: cancelled } = await client.query<{ first_row: number; last_row: number }>(
    `UPDATE job_chunks SET status = 'cancelled', updated_at = $2 WHERE job_id = $1 AND status = 'queued' RETURNING first_row, last_row`,
    [jobId, now],
  );
  const { idle } = await endChunks(client, jobId, cancelled, now, { cancel: true, finish: false });
  return { idle };
}

/**
 * Finishes a cancelled job with nothing in flight and settles it, in one
 * transaction (so finished and final cost stay one fact); also settles a finished
 * job whose reservation was left open (one finished before jobs were settled at
 * their finish). Null when there was nothing to do: a repeat is harmless.
 */
export async function finishCancelledJob(client: pg.PoolClient, jobId: string, now: Date): Promise<Settled | null> {
  const { rows } = await client.query<{ finished_now: boolean }>(
    `UPDATE jobs SET finished_at = COALESCE(finished_at, $2)
     WHERE id = $1 AND (finished_at IS NOT NULL
       OR (status = 'cancelled' AND NOT EXISTS (SELECT 1 FROM job_chunks WHERE job_id = $1 AND status IN ('queued', 'running'))))
     RETURNING finished_at = $2 AS finished_now`,
    [jobId, now],
  );
  if (!rows[0]) return null;
  const settled = await settleFinishedJob(client, jobId, now);
  return rows[0].finished_now || settled.settlements.length > 0 ? settled : null;
}

/** Cancelled jobs left unfinished with nothing in flight since before `before` (their `job.finish` message lost). */
export async function unfinishedCancelledJobs(sql: Sql, before: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT j.id FROM jobs j
     WHERE j.status = 'cancelled' AND j.finished_at IS NULL AND j.cancelled_at < $1
       AND NOT EXISTS (SELECT 1 FROM job_chunks c WHERE c.job_id = j.id AND c.status IN ('queued', 'running'))
     ORDER BY j.cancelled_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Deletes a finished job's rows now; later result reads are 404. Settlement reads
 * those rows, so the job's money must be settled first: it was, in the transaction
 * that finished the job. A job whose reservation is still open (one finished before
 * that was so) is not purged: `unsettled`, for finishCancelledJob to settle first.
 * A cancelled job whose chunks in flight have not finished is not finished yet:
 * null, nothing purged.
 */
export async function purgeJobResults(client: pg.PoolClient, jobId: string, now: Date): Promise<"purged" | "unsettled" | null> {
  const { rows } = await client.query<{ open: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM reservations WHERE job_id = $1 AND status = 'open') AS open
     FROM jobs WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled') AND finished_at IS NOT NULL FOR UPDATE`,
    [jobId],
  );
  if (rows.length === 0) return null;
  if (rows[0]?.open) return "unsettled";
  await client.query(`UPDATE jobs SET purged_at = COALESCE(purged_at, $2) WHERE id = $1`, [jobId, now]);
  await client.query(`DELETE FROM result_rows WHERE job_id = $1 AND id_month = $2`, [jobId, idMonth(jobId)]);
  return "purged";
}

/**
 * Marks a job failed (its chunks can never run) and settles it in the same
 * transaction: answers already written are charged, unsent rows released. Null
 * when the job was not running.
 */
export async function failJob(client: pg.PoolClient, jobId: string, code: string, message: string, now: Date): Promise<Settled | null> {
  const { rowCount } = await client.query(
    `UPDATE jobs SET status = 'failed', failure_code = $2, failure_message = $3, finished_at = $4 WHERE id = $1 AND status IN ('queued', 'running')`,
    [jobId, code, message, now],
  );
  if (rowCount === 0) return null;
  await client.query(`UPDATE job_chunks SET status = 'cancelled', updated_at = $2 WHERE job_id = $1 AND status IN ('queued', 'running')`, [jobId, now]);
  return settleFinishedJob(client, jobId, now);
}

/** A chunk that may need a new attempt, with the token of its latest claim (0: never claimed). */
export type StaleChunk = { job_id: string; chunk_no: number; status: "queued" | "running"; attempts: number; updated_at: Date };

/** Where a page of stale chunks ends: the next page starts after it. */
export type StaleChunkCursor = Pick<StaleChunk, "updated_at" | "job_id" | "chunk_no">;

/**
 * Chunks whose work may be lost: queued and untouched since before `queuedBefore`
 * (their message may be gone), or running with a lease that ran out (their worker
 * died, stopped renewing, or gave the chunk back after a failure) — a cancelled
 * job's in-flight chunk included, or the job would never end. In pages (`after` the
 * previous page's last), so a backlog of chunks merely waiting their turn cannot
 * hide the lost ones behind it.
 */
export async function staleChunks(sql: Sql, now: Date, queuedBefore: Date, limit = 500, after: StaleChunkCursor | null = null): Promise<StaleChunk[]> {
  const { rows } = await sql.query<StaleChunk>(
    `SELECT c.job_id, c.chunk_no, c.status, c.attempts, c.updated_at FROM job_chunks c JOIN jobs j ON j.id = c.job_id
     WHERE ${CHUNK_HAS_WORK}
       AND ((c.status = 'queued' AND c.updated_at < $2) OR (c.status = 'running' AND (c.leased_until IS NULL OR c.leased_until <= $1)))
       AND ($4::timestamptz IS NULL OR (c.updated_at, c.job_id, c.chunk_no) > ($4::timestamptz, $5::text, $6::int))
     ORDER BY c.updated_at, c.job_id, c.chunk_no LIMIT $3`,
    [now, queuedBefore, limit, after?.updated_at ?? null, after?.job_id ?? null, after?.chunk_no ?? null],
  );
  return rows;
}
