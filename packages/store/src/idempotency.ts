import { randomBytes } from "node:crypto";
import type { Sql } from "./db";

/** Whose Idempotency-Key this is: the account, the caller within it (API key), and the key. */
export type IdempotencyScope = { accountId: string; callerScope: string; key: string };

/** A held claim: only its owner (by token) may bind a resource or store the response. */
export type IdempotencyClaimRef = IdempotencyScope & { token: string };

export type IdempotencyClaim =
  | { kind: "claimed"; claim: IdempotencyClaimRef }
  /** The previous owner died after creating `resourceId`: answer with it, create nothing. */
  | { kind: "recover"; claim: IdempotencyClaimRef; resourceId: string }
  | { kind: "replay"; status: number; headers: Record<string, string>; body: Buffer }
  | { kind: "mismatch" }
  | { kind: "in_progress" };

const WHERE_SCOPE = `account_id = $1 AND caller_scope = $2 AND key = $3`;
const scopeParams = (s: IdempotencyScope) => [s.accountId, s.callerScope, s.key];

/**
 * Claims an Idempotency-Key for this request, atomically: exactly one concurrent
 * caller gets it. An expired record (past 24 h) is started afresh; a record whose
 * owner died mid-request (lock passed) may be taken over by the same request, and
 * if that owner had already created its resource the new owner recovers it.
 */
export async function claimIdempotencyKey(
  sql: Sql,
  c: IdempotencyScope & { requestHash: string; now: Date; lockMs: number; ttlMs: number },
): Promise<IdempotencyClaim> {
  const token = randomBytes(12).toString("base64url");
  const claim: IdempotencyClaimRef = { accountId: c.accountId, callerScope: c.callerScope, key: c.key, token };
  const lockedUntil = new Date(c.now.getTime() + c.lockMs);
  const expiresAt = new Date(c.now.getTime() + c.ttlMs);
  const claimed = await sql.query<{ resource_id: string | null }>(
    `INSERT INTO idempotency_records AS r (account_id, caller_scope, key, request_hash, state, locked_until, claim_token, created_at, expires_at)
     VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7, $8)
     ON CONFLICT (account_id, caller_scope, key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, state = 'in_progress', locked_until = EXCLUDED.locked_until,
           claim_token = EXCLUDED.claim_token, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
           resource_id = CASE WHEN r.expires_at <= $7 THEN NULL ELSE r.resource_id END,
           response_status = NULL, response_headers = NULL, response_body = NULL
       WHERE r.expires_at <= $7
          OR (r.state = 'in_progress' AND r.locked_until <= $7 AND r.request_hash = EXCLUDED.request_hash)
     RETURNING resource_id`,
    [...scopeParams(c), c.requestHash, lockedUntil, token, c.now, expiresAt],
  );
  const won = claimed.rows[0];
  if (won) return won.resource_id === null ? { kind: "claimed", claim } : { kind: "recover", claim, resourceId: won.resource_id };
  const { rows } = await sql.query<{ request_hash: string; state: string; response_status: number | null; response_headers: Record<string, string> | null; response_body: Buffer | null }>(
    `SELECT request_hash, state, response_status, response_headers, response_body FROM idempotency_records WHERE ${WHERE_SCOPE}`,
    scopeParams(c),
  );
  const existing = rows[0];
  // Deleted between our two statements (its request ended retryably): treat as still running; the client retries.
  if (!existing) return { kind: "in_progress" };
  if (existing.request_hash !== c.requestHash) return { kind: "mismatch" };
  if (existing.state !== "completed" || existing.response_status === null) return { kind: "in_progress" };
  return { kind: "replay", status: existing.response_status, headers: existing.response_headers ?? {}, body: existing.response_body ?? Buffer.alloc(0) };
}

/**
 * Binds the created lookup or job to the claim. Runs inside the transaction that
 * stores the resource and reserves its money: false when the claim was taken over
 * meanwhile, and then the caller must roll back (the new owner runs instead).
 */
export async function bindIdempotentResource(sql: Sql, claim: IdempotencyClaimRef, resourceId: string): Promise<boolean> {
  const r = await sql.query(
    `UPDATE idempotency_records SET resource_id = $5
     WHERE ${WHERE_SCOPE} AND claim_token = $4 AND state = 'in_progress' AND resource_id IS NULL`,
    [...scopeParams(claim), claim.token, resourceId],
  );
  return r.rowCount === 1;
}

/** Stores the final response for replay (only while this claim is still the owner). */
export async function completeIdempotencyKey(sql: Sql, claim: IdempotencyClaimRef, response: { status: number; headers: Record<string, string>; body: Buffer }): Promise<void> {
  await sql.query(
    `UPDATE idempotency_records SET state = 'completed', response_status = $5, response_headers = $6, response_body = $7
     WHERE ${WHERE_SCOPE} AND claim_token = $4`,
    [...scopeParams(claim), claim.token, response.status, JSON.stringify(response.headers), response.body],
  );
}

/**
 * A request that ended with a retryable error gives its claim up. Nothing created:
 * the record is forgotten and the retry runs afresh. A resource already created
 * (the error came after its commit): the lock is released so the retry recovers it
 * at once instead of creating and charging a second one.
 */
export async function abandonIdempotencyClaim(sql: Sql, claim: IdempotencyClaimRef, now: Date): Promise<void> {
  const params = [...scopeParams(claim), claim.token];
  await sql.query(`DELETE FROM idempotency_records WHERE ${WHERE_SCOPE} AND claim_token = $4 AND state = 'in_progress' AND resource_id IS NULL`, params);
  await sql.query(`UPDATE idempotency_records SET locked_until = $5 WHERE ${WHERE_SCOPE} AND claim_token = $4 AND state = 'in_progress'`, [...params, now]);
}

export async function purgeExpiredIdempotencyRecords(sql: Sql, now: Date): Promise<number> {
  const r = await sql.query(`DELETE FROM idempotency_records WHERE expires_at <= $1`, [now]);
  return r.rowCount ?? 0;
}
