import type { Sql } from "./db";

export type IdempotencyClaim =
  | { kind: "claimed" }
  | { kind: "replay"; status: number; headers: Record<string, string>; body: Buffer }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

/**
 * Claims an Idempotency-Key for this request, atomically: exactly one concurrent
 * caller gets `claimed`. An expired record (past 24 h) is started afresh; a record
 * whose owner died mid-request (lock passed) may be taken over by the same request.
 */
export async function claimIdempotencyKey(
  sql: Sql,
  c: { accountId: string; key: string; requestHash: string; now: Date; lockMs: number; ttlMs: number },
): Promise<IdempotencyClaim> {
  const lockedUntil = new Date(c.now.getTime() + c.lockMs);
  const expiresAt = new Date(c.now.getTime() + c.ttlMs);
  const claimed = await sql.query(
    `INSERT INTO idempotency_records AS r (account_id, key, request_hash, state, locked_until, created_at, expires_at)
     VALUES ($1, $2, $3, 'in_progress', $4, $5, $6)
     ON CONFLICT (account_id, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, state = 'in_progress', locked_until = EXCLUDED.locked_until,
           created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
           response_status = NULL, response_headers = NULL, response_body = NULL
       WHERE r.expires_at <= $5
          OR (r.state = 'in_progress' AND r.locked_until <= $5 AND r.request_hash = EXCLUDED.request_hash)
     RETURNING 1`,
    [c.accountId, c.key, c.requestHash, lockedUntil, c.now, expiresAt],
  );
  if (claimed.rowCount === 1) return { kind: "claimed" };
  const { rows } = await sql.query<{ request_hash: string; state: string; response_status: number | null; response_headers: Record<string, string> | null; response_body: Buffer | null }>(
    `SELECT request_hash, state, response_status, response_headers, response_body FROM idempotency_records WHERE account_id = $1 AND key = $2`,
    [c.accountId, c.key],
  );
  const existing = rows[0];
  // Deleted between our two statements (its request ended retryably): treat as still running; the client retries.
  if (!existing) return { kind: "in_progress" };
  if (existing.request_hash !== c.requestHash) return { kind: "mismatch" };
  if (existing.state !== "completed" || existing.response_status === null) return { kind: "in_progress" };
  return { kind: "replay", status: existing.response_status, headers: existing.response_headers ?? {}, body: existing.response_body ?? Buffer.alloc(0) };
}

/** Stores the final response for replay. */
export async function completeIdempotencyKey(
  sql: Sql,
  r: { accountId: string; key: string; status: number; headers: Record<string, string>; body: Buffer },
): Promise<void> {
  await sql.query(
    `UPDATE idempotency_records SET state = 'completed', response_status = $3, response_headers = $4, response_body = $5
     WHERE account_id = $1 AND key = $2`,
    [r.accountId, r.key, r.status, JSON.stringify(r.headers), r.body],
  );
}

/** Forgets a claim whose request ended with a retryable error, so the retry runs again. */
export async function releaseIdempotencyKey(sql: Sql, accountId: string, key: string): Promise<void> {
  await sql.query(`DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2 AND state = 'in_progress'`, [accountId, key]);
}

export async function purgeExpiredIdempotencyRecords(sql: Sql, now: Date): Promise<number> {
  const r = await sql.query(`DELETE FROM idempotency_records WHERE expires_at <= $1`, [now]);
  return r.rowCount ?? 0;
}
