import type pg from "pg";
import { idMonth } from "@svc/domain";
import { withTransaction, type Sql } from "./db";

/**
 * Deliveries: one row per (event, endpoint), planned once per event. A delivery is
 * attempted only by whoever holds its lease (`leased_until`, longer than an
 * attempt's deadline), so a duplicated queue message, a sweep and a retry never
 * send the same attempt twice at once, and a dispatcher killed mid-attempt leaves
 * a lease that simply runs out.
 *
 * held → pending (endpoint verified) | expired (24 h after the event) | cancelled (deleted)
 * pending → succeeded | pending (retry scheduled) | failed | cancelled
 */
export type DeliveryStatus = "held" | "pending" | "succeeded" | "failed" | "expired" | "cancelled";

/** Everything one attempt needs, returned by the statement that leases it. */
export type DeliveryTask = {
  delivery_id: string;
  /** Attempts already recorded; this one is number attempts + 1. */
  attempts: number;
  event_id: string;
  event_type: string;
  event_data: Record<string, unknown>;
  event_created_at: Date;
  livemode: boolean;
  endpoint_id: string;
  url: string;
  secret_encrypted: Buffer;
};

const TASK_COLUMNS = `d.id::text AS delivery_id, d.attempts, ev.id AS event_id, ev.type AS event_type, ev.data AS event_data,
  ev.created_at AS event_created_at, ev.livemode, e.id AS endpoint_id, e.url, e.secret_encrypted`;

const HELD_TTL = `interval '24 hours'`;

/**
 * Plans an event's deliveries (once: the event is marked dispatched in the same
 * statement) and leases those that can go out now. Lookup and job events go to the
 * endpoint they name, balance and limit events to every endpoint of the account and
 * mode; each only if subscribed. `webhook.*` events go to their endpoint whatever
 * its state; others are held while it is unverified. Returns null when the event
 * was already planned (a repeated message): see `leaseEventDeliveries`.
 */
export async function planEvent(sql: Sql, eventId: string, now: Date, leaseMs: number): Promise<DeliveryTask[] | null> {
  const { rows } = await sql.query<DeliveryTask & { planned: string }>(
    `WITH ev AS (
       UPDATE events SET dispatched_at = $2 WHERE id = $1 AND id_month = $4 AND dispatched_at IS NULL
       RETURNING id, account_id, livemode, type, data, endpoint_id, created_at, id_month
     ), targets AS (
       SELECT ev.id AS event_id, ev.id_month, e.id AS endpoint_id, (ev.type LIKE 'webhook.%' OR e.status = 'active') AS sendable
       FROM ev JOIN webhook_endpoints e ON e.account_id = ev.account_id AND e.livemode = ev.livemode AND e.deleted_at IS NULL
       WHERE (ev.endpoint_id IS NULL OR e.id = ev.endpoint_id)
         AND (ev.type LIKE 'webhook.%' OR ev.type = ANY (e.events))
         -- a challenge recorded before the latest URL change is moot
         AND (ev.type <> 'webhook.verification' OR e.url_changed_at <= ev.created_at)
       -- Ordered against verification, URL changes and deletion: planning waits for
       -- one in progress and then reads the endpoint as it left it, and one that comes
       -- later waits for this plan and then finds its deliveries to hold or cancel.
       FOR SHARE OF e
     ), d AS (
       INSERT INTO webhook_deliveries (event_id, id_month, endpoint_id, status, next_attempt_at, leased_until, created_at, updated_at)
       SELECT event_id, id_month, endpoint_id, CASE WHEN sendable THEN 'pending' ELSE 'held' END,
              CASE WHEN sendable THEN $2::timestamptz END, CASE WHEN sendable THEN $3::timestamptz END, $2, $2
       FROM targets
       ON CONFLICT (event_id, endpoint_id) DO NOTHING
       RETURNING id, endpoint_id, status, attempts
     )
     SELECT ev.id AS planned, t.* FROM ev LEFT JOIN (
       SELECT ${TASK_COLUMNS} FROM d JOIN ev ON true JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.status = 'pending'
     ) t ON true`,
    [eventId, now, new Date(now.getTime() + leaseMs), idMonth(eventId)],
  );
  if (rows.length === 0) return null;
  return rows.filter((r) => r.delivery_id !== null).map(({ planned: _planned, ...task }) => task);
}

type LeaseSelector = { deliveryId: string } | { eventId: string } | { dueBefore: Date; limit: number };

/**
 * Leases pending deliveries that are due and not leased by a live attempt, and not
 * to a deleted endpoint: one delivery, an event's (a repeated dispatch message), or
 * the oldest overdue ones (the sweep that recovers lost queue messages).
 */
export async function leaseDeliveries(sql: Sql, selector: LeaseSelector, now: Date, leaseMs: number): Promise<DeliveryTask[]> {
  let which: string;
  let param: unknown;
  if ("deliveryId" in selector) [which, param] = [`d.id = $3::bigint`, selector.deliveryId];
  else if ("eventId" in selector) [which, param] = [`d.event_id = $3`, selector.eventId];
  else {
    which = `d.id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= $3
                      AND (leased_until IS NULL OR leased_until < $1) ORDER BY next_attempt_at LIMIT ${Number(selector.limit)} FOR UPDATE SKIP LOCKED)`;
    param = selector.dueBefore;
  }
  const { rows } = await sql.query<DeliveryTask>(
    `UPDATE webhook_deliveries d SET leased_until = $2, updated_at = $1
     FROM events ev, webhook_endpoints e
     WHERE ${which} AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.leased_until IS NULL OR d.leased_until < $1)
       AND ev.id = d.event_id AND ev.id_month = d.id_month AND e.id = d.endpoint_id AND e.deleted_at IS NULL
     RETURNING ${TASK_COLUMNS}`,
    [now, new Date(now.getTime() + leaseMs), param],
  );
  return rows;
}

export type AttemptRecord = {
  deliveryId: string;
  attemptNo: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  /** When to retry after a failure; null = failed for good. */
  retryAt: Date | null;
  now: Date;
};

/**
 * Keeps the attempt and moves the delivery on (succeeded, retry at `retryAt`, or
 * failed), releasing the lease. A delivery cancelled meanwhile (endpoint deleted)
 * stays cancelled. Returns the new status, or null when it was not pending.
 */
export async function recordAttempt(sql: Sql, a: AttemptRecord): Promise<DeliveryStatus | null> {
  const status: DeliveryStatus = a.succeeded ? "succeeded" : a.retryAt ? "pending" : "failed";
  const { rows } = await sql.query<{ status: DeliveryStatus }>(
    // Filed under its delivery's (its event's) month; a repeat conflicts with that partition's (delivery_id, attempt_no).
    `WITH attempt AS (
       INSERT INTO delivery_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, error, succeeded, id_month)
       SELECT $1::bigint, $2, $3, $4, $5, $6, $7, d.id_month FROM webhook_deliveries d WHERE d.id = $1::bigint
       ON CONFLICT DO NOTHING
     )
     UPDATE webhook_deliveries SET attempts = GREATEST(attempts, $2), leased_until = NULL, updated_at = $10,
       -- Held or cancelled while the attempt was under way (URL changed, endpoint
       -- deleted): the attempt is kept, the delivery's new state is not overridden.
       -- A success also stands over a failure recorded by an attempt that overran
       -- its lease: the event did arrive.
       status = CASE WHEN status = 'pending' OR (status = 'failed' AND $7) THEN $8 ELSE status END,
       next_attempt_at = CASE WHEN status = 'pending' OR (status = 'failed' AND $7) THEN $9 ELSE next_attempt_at END
     WHERE id = $1::bigint RETURNING status`,
    [a.deliveryId, a.attemptNo, a.startedAt, a.durationMs, a.statusCode, a.error, a.succeeded, status, a.retryAt, a.now],
  );
  return rows[0]?.status ?? null;
}

/**
 * A challenge answered with a 2xx: the endpoint becomes active, unless its URL
 * changed after the challenge was issued. Held deliveries are released (those of
 * events older than 24 h expire instead) and other open challenges are dropped.
 * Returns the ids of the released deliveries, due now; null when nothing changed.
 */
export function activateEndpoint(pool: pg.Pool, endpointId: string, challengeCreatedAt: Date, now: Date): Promise<string[] | null> {
  return withTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE webhook_endpoints SET status = 'active', verified_at = $3, next_verification_at = NULL
       WHERE id = $1 AND status = 'pending_verification' AND deleted_at IS NULL AND url_changed_at <= $2`,
      [endpointId, challengeCreatedAt, now],
    );
    if (!rowCount) return null;
    const { rows } = await client.query<{ id: string; status: DeliveryStatus }>(
      `UPDATE webhook_deliveries d SET
         status = CASE WHEN ev.type = 'webhook.verification' THEN 'cancelled' WHEN ev.created_at >= $2::timestamptz - ${HELD_TTL} THEN 'pending' ELSE 'expired' END,
         next_attempt_at = CASE WHEN ev.type <> 'webhook.verification' AND ev.created_at >= $2::timestamptz - ${HELD_TTL} THEN $2::timestamptz END,
         updated_at = $2
       FROM events ev
       WHERE d.endpoint_id = $1 AND ev.id = d.event_id AND ev.id_month = d.id_month
         AND (d.status = 'held' OR (d.status = 'pending' AND ev.type = 'webhook.verification' AND (d.leased_until IS NULL OR d.leased_until < $2)))
       RETURNING d.id::text AS id, d.status`,
      [endpointId, now],
    );
    return rows.filter((r) => r.status === "pending").map((r) => r.id);
  });
}

/** Held deliveries of events more than 24 h old (as retries: "more than 24 hours") will never go out. */
export async function expireHeldDeliveries(sql: Sql, now: Date): Promise<number> {
  const { rowCount } = await sql.query(
    `UPDATE webhook_deliveries d SET status = 'expired', updated_at = $1
     FROM events ev WHERE d.status = 'held' AND ev.id = d.event_id AND ev.id_month = d.id_month AND ev.created_at < $1::timestamptz - ${HELD_TTL}`,
    [now],
  );
  return rowCount ?? 0;
}

/** Events recorded before `before` that were never planned (their queue message was lost). */
export async function undispatchedEvents(sql: Sql, before: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT id FROM events WHERE dispatched_at IS NULL AND created_at <= $1 ORDER BY created_at LIMIT $2`,
    [before, limit],
  );
  return rows.map((r) => r.id);
}

export type DeliveryLog = {
  delivery_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  attempts: Array<{ attempt_no: number; started_at: string; duration_ms: number; status_code: number | null; error: string | null; succeeded: boolean }>;
};

/** Every delivery of an event and every attempt, for operators. */
export async function deliveryLog(sql: Sql, eventId: string): Promise<DeliveryLog[]> {
  const { rows } = await sql.query<DeliveryLog>(
    `SELECT d.id::text AS delivery_id, d.endpoint_id, d.status, d.next_attempt_at,
            COALESCE(json_agg(json_build_object('attempt_no', a.attempt_no, 'started_at', a.started_at, 'duration_ms', a.duration_ms,
                     'status_code', a.status_code, 'error', a.error, 'succeeded', a.succeeded) ORDER BY a.attempt_no)
                     FILTER (WHERE a.id IS NOT NULL), '[]') AS attempts
     FROM webhook_deliveries d LEFT JOIN delivery_attempts a ON a.delivery_id = d.id AND a.id_month = $2
     WHERE d.event_id = $1 GROUP BY d.id ORDER BY d.id`,
    [eventId, idMonth(eventId)],
  );
  return rows;
}

/**
 * An operator's redelivery: every delivery of the event to an endpoint that still
 * exists becomes due now (one more attempt; retries only within the event's 24 h) —
 * except those held for an endpoint whose URL is not verified yet: they go out when
 * it is.
 */
export async function redeliverEvent(sql: Sql, eventId: string, now: Date): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = $2, updated_at = $2
     FROM webhook_endpoints e
     WHERE d.event_id = $1 AND e.id = d.endpoint_id AND e.deleted_at IS NULL AND d.status <> 'held'
       AND (d.leased_until IS NULL OR d.leased_until < $2)
     RETURNING d.id::text AS id`,
    [eventId, now],
  );
  return rows.map((r) => r.id);
}

/** Deliveries by state, for the dispatcher's gauges: pending, held and failed (index on status). */
export async function deliveryCounts(sql: Sql): Promise<{ pending: number; held: number; failed: number }> {
  const { rows } = await sql.query<{ status: "pending" | "held" | "failed"; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'held', 'failed') GROUP BY status`,
  );
  const counts = { pending: 0, held: 0, failed: 0 };
  for (const r of rows) counts[r.status] = r.n;
  return counts;
}
