import type { Sql } from "./db";

/**
 * The live-access review (docs/going-live.md): every personal test key issued by
 * POST /v1/test-keys also asks for live access; an operator answers with the admin
 * CLI. A request is the `test_key_requests` row of an issued key; its answer is kept
 * on it (see the live_access_review migration). Keys of one mailbox share one
 * account, so an answer is given to every waiting request of that account at once.
 */
export type LiveAccessStatus = "pending" | "approved" | "declined";

export type LiveAccessRequest = {
  id: string;
  email: string;
  name: string;
  company: string;
  use_case: string;
  created_at: Date;
  /** The account of the request's test key (null if that key was deleted). */
  account_id: string | null;
  status: LiveAccessStatus;
  decided_at: Date | null;
  note: string | null;
  live_key_id: string | null;
};

const SELECT_REQUESTS = `
  SELECT r.id, r.email, r.name, r.company, r.use_case, r.created_at, k.account_id,
         COALESCE(r.live_access_decision, 'pending') AS status,
         r.live_access_decided_at AS decided_at, r.live_access_note AS note, r.live_access_key_id AS live_key_id
  FROM test_key_requests r LEFT JOIN api_keys k ON k.id = r.api_key_id
  WHERE r.outcome = 'issued'`;

/** Requests with `status` (or every one), oldest first; at most `limit`. */
export async function listLiveAccessRequests(sql: Sql, filter: { status: LiveAccessStatus | "all"; limit: number }): Promise<LiveAccessRequest[]> {
  const { rows } = await sql.query<LiveAccessRequest>(
    `${SELECT_REQUESTS} AND ($1 = 'all' OR COALESCE(r.live_access_decision, 'pending') = $1)
     ORDER BY r.created_at, r.id LIMIT $2`,
    [filter.status, filter.limit],
  );
  return rows;
}

/** One request, locked for the decision when `forUpdate` (inside a transaction); null when there is no issued request with that id. */
export async function getLiveAccessRequest(sql: Sql, id: string, forUpdate = false): Promise<LiveAccessRequest | null> {
  const { rows } = await sql.query<LiveAccessRequest>(`${SELECT_REQUESTS} AND r.id = $1${forUpdate ? " FOR UPDATE OF r" : ""}`, [id]);
  return rows[0] ?? null;
}

/**
 * Records the answer on this request and on every other waiting request of the same
 * account (the same mailbox's earlier or later keys). Returns the ids answered.
 */
export async function decideLiveAccess(
  sql: Sql,
  d: { id: string; accountId: string | null; decision: "approved" | "declined"; note: string; liveKeyId: string | null; at: Date },
): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE test_key_requests r
     SET live_access_decision = $2, live_access_decided_at = $3, live_access_note = $4, live_access_key_id = $5
     WHERE r.outcome = 'issued' AND (r.id = $1 OR (r.live_access_decision IS NULL AND $6::text IS NOT NULL
       AND r.api_key_id IN (SELECT id FROM api_keys WHERE account_id = $6)))
     RETURNING r.id`,
    [d.id, d.decision, d.at, d.note, d.liveKeyId, d.accountId],
  );
  return rows.map((r) => r.id).sort();
}
