import { randomBytes } from "node:crypto";
import { newId } from "@svc/domain";
import type pg from "pg";
import { withTransaction, type Sql } from "./db";
import { recordEvent } from "./events";

export type EndpointStatus = "pending_verification" | "active";

export type EndpointRecord = {
  id: string;
  account_id: string;
  livemode: boolean;
  url: string;
  events: string[];
  status: EndpointStatus;
  created_at: Date;
  verified_at: Date | null;
};

const COLUMNS = `id, account_id, livemode, url, events, status, created_at, verified_at`;

/** An unanswered endpoint is challenged again this often. */
export const VERIFICATION_INTERVAL_MS = 3600_000;

/** Limit per account and mode (spec: Limits). */
export const MAX_ENDPOINTS_PER_MODE = 20;

type Owner = { accountId: string; livemode: boolean };

/** Records the ownership challenge for the endpoint's current URL (a new event each time, with a new challenge). */
export function recordVerificationEvent(client: Sql, owner: Owner, endpointId: string, now: Date): Promise<string> {
  return recordEvent(client, {
    ...owner,
    type: "webhook.verification",
    endpointId,
    createdAt: now,
    data: { object: "webhook_endpoint", id: endpointId, challenge: randomBytes(18).toString("base64url") },
  });
}

export async function listEndpoints(sql: Sql, owner: Owner): Promise<EndpointRecord[]> {
  const { rows } = await sql.query<EndpointRecord>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND livemode = $2 AND deleted_at IS NULL ORDER BY created_at, id`,
    [owner.accountId, owner.livemode],
  );
  return rows;
}

export async function findEndpoint(sql: Sql, owner: Owner, id: string, lock = false): Promise<EndpointRecord | null> {
  const { rows } = await sql.query<EndpointRecord>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL${lock ? " FOR UPDATE" : ""}`,
    [id, owner.accountId, owner.livemode],
  );
  return rows[0] ?? null;
}

/** Whether `id` is a verified (active), undeleted endpoint of the owner's account and mode: a target lookups and jobs may name. */
export async function isActiveEndpoint(sql: Sql, owner: Owner, id: string): Promise<boolean> {
  const { rows } = await sql.query(
    `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND livemode = $3 AND status = 'active' AND deleted_at IS NULL`,
    [id, owner.accountId, owner.livemode],
  );
  return rows.length > 0;
}

/**
 * Creates an endpoint (pending verification) and its first challenge, unless the
 * account already has the maximum for this mode. Creations for one account and
 * mode are serialised by an advisory lock so two at once cannot both take the
 * twentieth place (the hot account row is left alone).
 */
export async function createEndpoint(
  client: pg.PoolClient,
  input: Owner & { url: string; events: string[]; secretEncrypted: Buffer; now: Date },
): Promise<{ endpoint: EndpointRecord; eventId: string } | "limit_reached"> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints:' || $1 || ':' || $2::text))`, [input.accountId, input.livemode]);
  const { rows: count } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1 AND livemode = $2 AND deleted_at IS NULL`,
    [input.accountId, input.livemode],
  );
  if ((count[0]?.n ?? 0) >= MAX_ENDPOINTS_PER_MODE) return "limit_reached";
  const id = newId("webhookEndpoint");
  const { rows } = await client.query<EndpointRecord>(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted, created_at, url_changed_at, next_verification_at)
     VALUES ($1, $2, $3, $4, $5, 'pending_verification', $6, $7, $7, $8)
     RETURNING ${COLUMNS}`,
    [id, input.accountId, input.livemode, input.url, input.events, input.secretEncrypted, input.now, new Date(input.now.getTime() + VERIFICATION_INTERVAL_MS)],
  );
  const eventId = await recordVerificationEvent(client, input, id, input.now);
  return { endpoint: rows[0] as EndpointRecord, eventId };
}

/**
 * Changes the URL and/or the subscribed events. A new URL must be verified again:
 * the endpoint goes back to pending_verification, a new challenge is recorded, and
 * deliveries waiting for it are held until it is verified (held events expire 24 h
 * after they happened). Returns the challenge's event id when one was recorded.
 */
export async function updateEndpoint(
  client: pg.PoolClient,
  owner: Owner,
  id: string,
  change: { url?: string; events?: string[]; now: Date },
): Promise<{ endpoint: EndpointRecord; eventId: string | null } | null> {
  const current = await findEndpoint(client, owner, id, true);
  if (!current) return null;
  const urlChanged = change.url !== undefined && change.url !== current.url;
  const { rows } = await client.query<EndpointRecord & { url_changed_at: Date }>(
    `UPDATE webhook_endpoints SET
       events = COALESCE($2, events),
       url = CASE WHEN $3 THEN $4 ELSE url END,
       status = CASE WHEN $3 THEN 'pending_verification' ELSE status END,
       verified_at = CASE WHEN $3 THEN NULL ELSE verified_at END,
       -- Strictly after the previous change and every challenge already recorded,
       -- whatever the clocks that stamped them: only a challenge recorded at or after
       -- it (below, with this very time) can verify the new URL.
       url_changed_at = CASE WHEN $3 THEN GREATEST($5::timestamptz, url_changed_at + interval '1 millisecond',
         (SELECT max(ev.created_at) + interval '1 millisecond' FROM events ev WHERE ev.endpoint_id = $1 AND ev.type = 'webhook.verification'))
         ELSE url_changed_at END,
       next_verification_at = CASE WHEN $3 THEN $6 ELSE next_verification_at END
     WHERE id = $1 RETURNING ${COLUMNS}, url_changed_at`,
    [id, change.events ?? null, urlChanged, change.url ?? null, change.now, new Date(change.now.getTime() + VERIFICATION_INTERVAL_MS)],
  );
  if (!urlChanged) {
    const { url_changed_at: _unchanged, ...endpoint } = rows[0] as EndpointRecord & { url_changed_at: Date };
    return { endpoint, eventId: null };
  }
  // Undelivered events wait for the new URL; a challenge for the old URL is moot. A
  // test event queued (202) still goes out, to the new URL, before verification.
  await client.query(
    `UPDATE webhook_deliveries d SET status = CASE WHEN ev.type = 'webhook.verification' THEN 'cancelled' ELSE 'held' END,
       next_attempt_at = NULL, updated_at = $2
     FROM events ev WHERE d.endpoint_id = $1 AND d.status = 'pending' AND ev.id = d.event_id AND ev.id_month = d.id_month AND ev.type <> 'webhook.test'`,
    [id, change.now],
  );
  const { url_changed_at: changedAt, ...endpoint } = rows[0] as EndpointRecord & { url_changed_at: Date };
  const eventId = await recordVerificationEvent(client, owner, id, changedAt);
  return { endpoint, eventId };
}

/** Deletes an endpoint: hidden from lists, and nothing not yet sent is delivered. False when there is none. */
export async function deleteEndpoint(client: pg.PoolClient, owner: Owner, id: string, now: Date): Promise<boolean> {
  const { rowCount } = await client.query(
    `UPDATE webhook_endpoints SET deleted_at = $4, next_verification_at = NULL WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL`,
    [id, owner.accountId, owner.livemode, now],
  );
  if (!rowCount) return false;
  await client.query(
    `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = $2 WHERE endpoint_id = $1 AND status IN ('pending', 'held')`,
    [id, now],
  );
  return true;
}

/** Records a webhook.test event for the endpoint (delivered even before verification). */
export function recordTestEvent(client: Sql, owner: Owner, endpointId: string, now: Date): Promise<string> {
  return recordEvent(client, {
    ...owner,
    type: "webhook.test",
    endpointId,
    createdAt: now,
    data: { object: "webhook_endpoint", id: endpointId, message: "This is a test event sent from the API." },
  });
}

/**
 * Records a new challenge for every endpoint still unverified an hour after the
 * last one, and schedules the next. Safe from several replicas at once.
 */
export function resendDueVerifications(pool: pg.Pool, now: Date, limit = 100): Promise<string[]> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; account_id: string; livemode: boolean; issued_at: Date }>(
      `UPDATE webhook_endpoints SET next_verification_at = $2
       WHERE id IN (SELECT id FROM webhook_endpoints
                    WHERE status = 'pending_verification' AND deleted_at IS NULL AND next_verification_at <= $1
                    ORDER BY next_verification_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING id, account_id, livemode, GREATEST($1::timestamptz, url_changed_at) AS issued_at`,
      [now, new Date(now.getTime() + VERIFICATION_INTERVAL_MS), limit],
    );
    const eventIds: string[] = [];
    // Recorded under the endpoint's row lock, never before its current URL's change
    // (even with this clock behind the gateway's), so it is a challenge for that URL.
    for (const e of rows) eventIds.push(await recordVerificationEvent(client, { accountId: e.account_id, livemode: e.livemode }, e.id, e.issued_at));
    return eventIds;
  });
}
