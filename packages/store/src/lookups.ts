import type pg from "pg";
import { idMonth, type CheckResult } from "@svc/domain";
import type { Sql } from "./db";
import type { LeaseRenewal } from "./lease";
import type { StoredRow } from "./stored-row";
import { testUsageRows, testUsageUpsert, type TestUsage } from "./usage";

export type LookupRecord = {
  id: string;
  account_id: string;
  api_key_id: string;
  livemode: boolean;
  status: "pending" | "completed";
  checks: string[];
  row_count: number;
  checks_total: number;
  webhook_endpoint_id: string | null;
  completes_at: Date | null;
  announced_pending: boolean;
  created_at: Date;
  completed_at: Date | null;
  expires_at: Date;
};

export type { StoredRow } from "./stored-row";

export type NewLookup = {
  /** Test mode records its usage here (live usage is recorded when the ledger settles). */
  usage?: TestUsage;
  id: string;
  accountId: string;
  apiKeyId: string;
  livemode: boolean;
  status: "pending" | "completed";
  checks: string[];
  checksTotal: number;
  webhookEndpointId: string | null;
  requestId: string;
  createdAt: Date;
  completedAt: Date | null;
  completesAt: Date | null;
  expiresAt: Date;
  rows: StoredRow[];
};

/** The record a read of a just-stored lookup gives (before anything answers or announces it). */
export function lookupRecordOf(l: NewLookup): LookupRecord {
  return {
    id: l.id,
    account_id: l.accountId,
    api_key_id: l.apiKeyId,
    livemode: l.livemode,
    status: l.status,
    checks: l.checks,
    row_count: l.rows.length,
    checks_total: l.checksTotal,
    webhook_endpoint_id: l.webhookEndpointId,
    completes_at: l.completesAt,
    announced_pending: false,
    created_at: l.createdAt,
    completed_at: l.completedAt,
    expires_at: l.expiresAt,
  };
}

/** A stored row in the columns the lookup inserts' `jsonb_to_recordset` reads (one object literal shape). */
export function storedRowRecord(r: StoredRow) {
  return {
    row_no: r.row_no,
    kind: r.kind,
    input_masked: r.input_masked,
    e164: r.e164,
    country: r.country,
    number_status: r.number_status,
    email: r.email,
    email_status: r.email_status,
    checks: r.checks,
    pending_checks: r.checks.filter((c) => c.status === "pending").length,
  };
}

/** A lookup's rows as the `jsonb_to_recordset` parameter of the lookup inserts. */
function storedRowsJson(l: NewLookup): string {
  return JSON.stringify(l.rows.map(storedRowRecord));
}

/** The parameters of `lookupInsertCtes`, in its order (17 values). */
export function lookupInsertValues(l: NewLookup): unknown[] {
  return [
    l.id,
    l.accountId,
    l.apiKeyId,
    l.livemode,
    l.status,
    l.checks,
    l.rows.length,
    l.checksTotal,
    l.status === "completed" ? l.checksTotal : 0,
    l.webhookEndpointId,
    l.requestId,
    l.createdAt,
    l.completedAt,
    l.completesAt,
    l.expiresAt,
    storedRowsJson(l),
    idMonth(l.id),
  ];
}

/**
 * A lookup and its rows as the CTEs `lookup` and `stored_rows` of one statement, reading
 * `lookupInsertValues` from parameter `$first` on; nothing is written unless `when` holds
 * (the one-statement reservation's condition). Every lookup insert uses this one text.
 */
export function lookupInsertCtes(first: number, when = "TRUE"): string {
  const p = (i: number) => `$${first + i}`;
  return `lookup AS (
       INSERT INTO lookups (id, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done,
                            webhook_endpoint_id, request_id, created_at, completed_at, completes_at, expires_at, id_month)
       SELECT ${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}::boolean, ${p(4)}, ${p(5)}::text[], ${p(6)}::int, ${p(7)}::int, ${p(8)}::int, ${p(9)}, ${p(10)},
              ${p(11)}::timestamptz, ${p(12)}::timestamptz, ${p(13)}::timestamptz, ${p(14)}::timestamptz, ${p(16)}::date
       WHERE ${when}
       RETURNING id, id_month),
     stored_rows AS (
       INSERT INTO result_rows (lookup_id, id_month, row_no, kind, input_masked, e164, country, number_status, email, email_status, checks, pending_checks)
       SELECT lookup.id, lookup.id_month, r.row_no, r.kind, r.input_masked, r.e164, r.country, r.number_status, r.email, r.email_status, r.checks, r.pending_checks
       FROM lookup, jsonb_to_recordset(${p(15)}::jsonb) AS r(row_no int, kind text, input_masked text, e164 text, country text,
            number_status text, email text, email_status text, checks jsonb, pending_checks int)
       RETURNING 1)`;
}

/** Inserts a lookup, all its rows and (test mode) its usage in one statement: one round trip, all or nothing. */
export async function insertLookup(sql: Sql, l: NewLookup): Promise<void> {
  // Named: prepared once per connection, so the hot path skips parse and plan.
  const usage = testUsageRows(l.usage);
  await sql.query({
    name: "insert-lookup",
    text: `WITH ${lookupInsertCtes(1)},
     usage AS (${testUsageUpsert({ account: 2, key: 3, day: 18, codes: 19, checks: 20, conclusive: 22, identifiers: 21 })})
     SELECT 1`,
    values: [
      ...lookupInsertValues(l),
      l.usage?.day ?? null,
      usage.map((u) => u.check),
      usage.map((u) => u.checks),
      l.usage?.identifiers ?? 0,
      usage.map((u) => u.conclusive),
    ],
  });
}

const LOOKUP_COLUMNS = `l.id, l.account_id, l.api_key_id, l.livemode, l.status, l.checks, l.row_count, l.checks_total,
  l.webhook_endpoint_id, l.completes_at, l.announced_pending, l.created_at, l.completed_at, l.expires_at`;

/**
 * A lookup of the account with its rows in order, or null when it does not exist,
 * belongs to another account or mode, or has passed its retention period.
 */
export async function getLookup(
  sql: Sql,
  id: string,
  scope: { accountId: string; livemode: boolean },
  now: Date,
): Promise<{ lookup: LookupRecord; rows: StoredRow[] } | null> {
  const { rows } = await sql.query<LookupRecord & { rows: StoredRow[] | null }>(
    `SELECT ${LOOKUP_COLUMNS},
       (SELECT jsonb_agg(jsonb_build_object(
           'row_no', r.row_no, 'kind', r.kind, 'input_masked', r.input_masked, 'e164', r.e164, 'country', r.country,
           'number_status', r.number_status, 'email', r.email, 'email_status', r.email_status, 'checks', r.checks)
         ORDER BY r.row_no)
        FROM result_rows r WHERE r.lookup_id = l.id AND r.id_month = $5) AS rows
     FROM lookups l
     WHERE l.id = $1 AND l.id_month = $5 AND l.account_id = $2 AND l.livemode = $3 AND l.expires_at > $4`,
    [id, scope.accountId, scope.livemode, now, idMonth(id)],
  );
  const row = rows[0];
  if (!row) return null;
  const { rows: resultRows, ...lookup } = row;
  return { lookup, rows: resultRows ?? [] };
}

/** Stored identifiers of a lookup's rows, for completing it from the store alone. */
export async function getLookupIdentifiers(
  sql: Sql,
  id: string,
): Promise<Array<{ row_no: number; kind: "number" | "email"; e164: string | null; email: string | null; number_status: string | null; email_status: string | null }>> {
  const { rows } = await sql.query(
    `SELECT row_no, kind, e164, email, number_status, email_status FROM result_rows WHERE lookup_id = $1 AND id_month = $2 ORDER BY row_no`,
    [id, idMonth(id)],
  );
  return rows;
}

/** Every row's checks of a lookup, as stored (for the `lookup.completed` event's summary). */
export async function lookupRowChecks(sql: Sql, id: string): Promise<Array<{ checks: CheckResult[] }>> {
  const { rows } = await sql.query<{ checks: CheckResult[] }>(`SELECT checks FROM result_rows WHERE lookup_id = $1 AND id_month = $2`, [id, idMonth(id)]);
  return rows;
}

/**
 * Locks a lookup row until COMMIT and reads what decides whether a test completion
 * is due (null: no such lookup). The lock makes concurrent completions of one test
 * lookup (its message, the sweep, a read) wait for each other, so one completes it.
 */
export async function lockLookupForCompletion(
  client: pg.PoolClient,
  id: string,
): Promise<{ checks: string[]; completes_at: Date | null; status: string; livemode: boolean } | null> {
  const { rows } = await client.query<{ checks: string[]; completes_at: Date | null; status: string; livemode: boolean }>(
    `SELECT checks, completes_at, status, livemode FROM lookups WHERE id = $1 AND id_month = $2 FOR UPDATE`,
    [id, idMonth(id)],
  );
  return rows[0] ?? null;
}

/**
 * Completes a pending lookup with final check results, exactly once: only the
 * caller whose UPDATE flips `pending` to `completed` gets the lookup back (and so
 * records the `lookup.completed` event in the same transaction). A live run passes
 * its lease `token`: it completes only while it holds the lease (its token, not run
 * out at `completedAt`), so a run that lost its lease writes nothing.
 */
export async function completeLookup(
  client: pg.PoolClient,
  id: string,
  results: Array<{ row_no: number; checks: CheckResult[] }>,
  completedAt: Date,
  token?: number,
): Promise<LookupRecord | null> {
  const { rows } = await client.query<LookupRecord>(
    `UPDATE lookups l SET status = 'completed', completed_at = $2, checks_done = checks_total, leased_until = NULL
     WHERE l.id = $1 AND l.id_month = $4 AND l.status = 'pending' AND ($3::int IS NULL OR (l.attempts = $3 AND l.leased_until > $2))
     RETURNING ${LOOKUP_COLUMNS}`,
    [id, completedAt, token ?? null, idMonth(id)],
  );
  const lookup = rows[0];
  if (!lookup) return null;
  await client.query(
    `UPDATE result_rows r SET checks = u.checks, pending_checks = 0
     FROM jsonb_to_recordset($2::jsonb) AS u(row_no int, checks jsonb)
     WHERE r.lookup_id = $1 AND r.id_month = $3 AND r.row_no = u.row_no`,
    [id, JSON.stringify(results), idMonth(id)],
  );
  return lookup;
}

/** Pending test lookups whose completion time has passed (a safety net for lost queue messages). */
export async function dueTestLookups(sql: Sql, now: Date, limit = 100): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM lookups WHERE status = 'pending' AND livemode = false AND completes_at <= $1 ORDER BY completes_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Marks a lookup as answered `pending` (202). Returns false when it completed in
 * the meantime: the caller then answers 200 with the completed lookup instead, and
 * no lookup.completed event is due. Row locks order this against completeLookup.
 */
export async function announcePending(sql: Sql, id: string): Promise<boolean> {
  const r = await sql.query(`UPDATE lookups SET announced_pending = true WHERE id = $1 AND id_month = $2 AND status = 'pending'`, [id, idMonth(id)]);
  return r.rowCount === 1;
}

/** Live rows still waiting for answers, with what a source needs to answer them. */
export async function pendingLookupRows(
  sql: Sql,
  lookupId: string,
): Promise<Array<{ row_no: number; kind: "number" | "email"; e164: string | null; email: string | null; row_status: string; checks: CheckResult[] }>> {
  const { rows } = await sql.query(
    `SELECT row_no, kind, e164, email, COALESCE(number_status, email_status) AS row_status, checks
     FROM result_rows WHERE lookup_id = $1 AND id_month = $2 AND pending_checks > 0 ORDER BY row_no`,
    [lookupId, idMonth(lookupId)],
  );
  return rows;
}

/** One run's hold on a live lookup: the lease token (the lookup's `attempts` after the claim) and the lease's end. */
export type LookupClaim = { attempts: number; leased_until: Date };

/**
 * Claims a pending live lookup for one run, leased until `now + leaseMs`; null
 * when it is not pending or another run holds a live lease on it.
 */
export async function claimLiveLookup(sql: Sql, id: string, now: Date, leaseMs: number): Promise<LookupClaim | null> {
  const { rows } = await sql.query<LookupClaim>(
    `UPDATE lookups SET attempts = attempts + 1, leased_until = $3
     WHERE id = $1 AND id_month = $4 AND livemode = true AND status = 'pending' AND (leased_until IS NULL OR leased_until <= $2)
     RETURNING attempts, leased_until`,
    [id, now, new Date(now.getTime() + leaseMs), idMonth(id)],
  );
  return rows[0] ?? null;
}

/** A claimed row: pendingLookupRows's, with the country the gateway's parse stored (no second parse for it). */
export type ClaimedLookupRow = Awaited<ReturnType<typeof pendingLookupRows>>[number] & { country: string | null };

/**
 * claimLiveLookup and pendingLookupRows in one round trip: the claim (null as
 * there) with the rows still waiting for answers, read in the claim's statement.
 * Nothing but a run holding the lease writes those rows, so they are what a
 * separate read right after the claim would see.
 */
export async function claimLiveLookupWithRows(
  sql: Sql,
  id: string,
  now: Date,
  leaseMs: number,
): Promise<(LookupClaim & { rows: ClaimedLookupRow[] }) | null> {
  const { rows } = await sql.query<LookupClaim & { rows: ClaimedLookupRow[] }>({
    name: "claim-live-lookup-rows",
    text: `WITH claimed AS (
       UPDATE lookups SET attempts = attempts + 1, leased_until = $3
       WHERE id = $1 AND id_month = $4 AND livemode = true AND status = 'pending' AND (leased_until IS NULL OR leased_until <= $2)
       RETURNING attempts, leased_until)
     SELECT c.attempts, c.leased_until,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('row_no', r.row_no, 'kind', r.kind, 'e164', r.e164, 'country', r.country, 'email', r.email,
                   'row_status', COALESCE(r.number_status, r.email_status), 'checks', r.checks) ORDER BY r.row_no)
                 FROM result_rows r WHERE r.lookup_id = $1 AND r.id_month = $4 AND r.pending_checks > 0), '[]'::jsonb) AS rows
     FROM claimed c`,
    values: [id, now, new Date(now.getTime() + leaseMs), idMonth(id)],
  });
  return rows[0] ?? null;
}

/**
 * completeLookup for a live run holding its lease, as one statement (one round
 * trip, its own transaction), returning the lookup's reservation id (null when it
 * has none). Undefined when it did not complete the lookup: not this run's to
 * complete, or answered 202 with a webhook endpoint — that completion records a
 * `lookup.completed` event in the same transaction — so the caller then runs
 * completeLookup's transaction, which tells the two apart. Row locks order it
 * against announcePending as they do completeLookup.
 *
 * `rows` is every row's checks as this statement left them stored (jsonb's key
 * order, what a read returns), for the completion notice to carry to the request
 * still waiting; null once the lookup was answered 202 (nobody waits for it then).
 */
export async function completeLiveLookupAlone(
  sql: Sql,
  id: string,
  results: Array<{ row_no: number; checks: CheckResult[] }>,
  completedAt: Date,
  token: number,
): Promise<{ reservationId: string | null; rows: Array<{ row_no: number; checks: CheckResult[] }> | null } | undefined> {
  const { rows } = await sql.query<{ done: boolean; reservation_id: string | null; rows: Array<{ row_no: number; checks: CheckResult[] }> | null }>({
    name: "complete-live-lookup-alone",
    // The rows this statement did not touch are read from its snapshot: unchanged by it.
    text: `WITH done AS (
       UPDATE lookups l SET status = 'completed', completed_at = $2, checks_done = checks_total, leased_until = NULL
       WHERE l.id = $1 AND l.id_month = $5 AND l.status = 'pending' AND l.attempts = $3 AND l.leased_until > $2
         AND NOT (l.announced_pending AND l.webhook_endpoint_id IS NOT NULL)
       RETURNING l.id, l.announced_pending),
     answered AS (
       UPDATE result_rows r SET checks = u.checks, pending_checks = 0
       FROM done, jsonb_to_recordset($4::jsonb) AS u(row_no int, checks jsonb)
       WHERE r.lookup_id = done.id AND r.id_month = $5 AND r.row_no = u.row_no
       RETURNING r.row_no, r.checks)
     SELECT EXISTS (SELECT 1 FROM done) AS done,
            (SELECT v.id FROM reservations v WHERE v.lookup_id = $1) AS reservation_id,
            (SELECT jsonb_agg(jsonb_build_object('row_no', s.row_no, 'checks', s.checks) ORDER BY s.row_no)
             FROM (SELECT row_no, checks FROM answered
                   UNION ALL
                   SELECT r.row_no, r.checks FROM result_rows r, done
                   WHERE r.lookup_id = done.id AND r.id_month = $5 AND r.row_no NOT IN (SELECT row_no FROM answered)) s
             WHERE NOT (SELECT announced_pending FROM done)) AS rows`,
    values: [id, completedAt, token, JSON.stringify(results), idMonth(id)],
  });
  const row = rows[0];
  return row?.done ? { reservationId: row.reservation_id, rows: row.rows } : undefined;
}

/** Extends a run's lease while it still holds it (see renewChunkLease); false = lost. */
export async function renewLookupLease(sql: Sql, id: string, r: LeaseRenewal): Promise<boolean> {
  const { rowCount } = await sql.query(
    `UPDATE lookups SET leased_until = $5 WHERE id = $1 AND id_month = $6 AND status = 'pending' AND attempts = $2 AND leased_until = $3 AND leased_until > $4`,
    [id, r.token, r.held, r.now, r.until, idMonth(id)],
  );
  return rowCount === 1;
}

/** A run that failed gives the lookup back: its lease ends at `until`, its failure back-off (see releaseChunkLease). */
export async function releaseLookupLease(sql: Sql, id: string, token: number, until: Date): Promise<boolean> {
  const { rowCount } = await sql.query(
    `UPDATE lookups SET leased_until = $3 WHERE id = $1 AND id_month = $4 AND status = 'pending' AND attempts = $2`,
    [id, token, until, idMonth(id)],
  );
  return rowCount === 1;
}

/** A pending live lookup that may need a new run, with the token of its latest claim (0: never run). */
export type StaleLookup = { id: string; attempts: number; claimed: boolean; created_at: Date };

/**
 * Pending live lookups whose run may be lost: never claimed though created before
 * `unclaimedBefore` (their message may be gone), or claimed with a lease that ran
 * out by `now` (their worker died, stopped renewing, or gave them back). In pages
 * (`after` the previous page's last), so lookups merely waiting their turn cannot
 * hide the lost ones behind them.
 */
export async function stalePendingLiveLookups(
  sql: Sql,
  now: Date,
  unclaimedBefore: Date,
  limit = 500,
  after: Pick<StaleLookup, "created_at" | "id"> | null = null,
): Promise<StaleLookup[]> {
  const { rows } = await sql.query<StaleLookup>(
    `SELECT id, attempts, leased_until IS NOT NULL AS claimed, created_at FROM lookups
     WHERE status = 'pending' AND livemode = true
       AND ((leased_until IS NULL AND created_at < $2) OR leased_until <= $1)
       AND ($4::timestamptz IS NULL OR (created_at, id) > ($4::timestamptz, $5::text))
     ORDER BY created_at, id LIMIT $3`,
    [now, unclaimedBefore, limit, after?.created_at ?? null, after?.id ?? null],
  );
  return rows;
}
