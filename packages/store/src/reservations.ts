import type pg from "pg";
import { newId, type UnitPrices } from "@svc/domain";
import type { Sql } from "./db";
import type { KeyedSemaphore } from "./keyed-semaphore";
import { lookupInsertCtes, lookupInsertValues, type NewLookup } from "./lookups";

export type ReservationRefusal = "insufficient_balance" | "daily_identifiers_cap" | "account_daily_spend_cap" | "key_daily_spend_cap";

export type ReserveInput = {
  accountId: string;
  apiKeyId: string;
  /** The key has a daily spend cap (agent keys always do): count against it too. */
  keyHasCap: boolean;
  amountMicros: bigint;
  identifiers: number;
  /** UTC day (YYYY-MM-DD) the request counts against. */
  day: string;
  unitPrices: UnitPrices;
  lookupId?: string;
  jobId?: string;
  expiresAt: Date;
};

/**
 * Reserves the maximum possible cost of a request inside the caller's transaction.
 * Each check-and-add is one conditional UPDATE on the key's and the account's row,
 * so concurrent requests serialise on the row lock and can never overdraw the
 * balance or pass a cap together. The caller rolls back on refusal.
 *
 * Call it last before COMMIT: the account row of a busy account is the one hot
 * spot, and its lock is held from the UPDATE until the commit, so everything else
 * the transaction writes should already be written.
 */
export async function reserve(client: pg.PoolClient, r: ReserveInput & { reservationId?: string }): Promise<{ ok: true; reservationId: string } | { ok: false; reason: ReservationRefusal }> {
  const amount = r.amountMicros.toString();
  const reservationId = r.reservationId ?? newId("reservation");
  // One statement, one round trip: the key's cap (when it has one), then the account's
  // conditions, then the reservation row, each only when the one before it passed.
  // A refusal leaves the key's counter added to: the caller rolls back, as before.
  const { rows } = await client.query<{ key_ok: boolean; reserved: boolean }>({
    name: "reserve",
    text: `WITH key AS (
       UPDATE api_keys SET counter_day = $2::date,
              day_spend_micros = (CASE WHEN counter_day = $2::date THEN day_spend_micros ELSE 0 END) + $3::bigint
       WHERE $10::boolean AND id = $5 AND (daily_spend_cap_micros IS NULL
              OR (CASE WHEN counter_day = $2::date THEN day_spend_micros ELSE 0 END) + $3::bigint <= daily_spend_cap_micros)
       RETURNING 1),
     ${accountReservationCte("(NOT $10::boolean OR EXISTS (SELECT 1 FROM key))")},
     reservation AS (
       INSERT INTO reservations (id, account_id, api_key_id, lookup_id, job_id, amount_micros, unit_prices, day, expires_at)
       SELECT $6, $1, $5, $7, $8, $3::bigint, $9::jsonb, $2::date, $11 WHERE EXISTS (SELECT 1 FROM account)
       RETURNING 1)
     SELECT (NOT $10::boolean OR EXISTS (SELECT 1 FROM key)) AS key_ok, EXISTS (SELECT 1 FROM reservation) AS reserved`,
    values: [r.accountId, r.day, amount, r.identifiers, r.apiKeyId, reservationId, r.lookupId ?? null, r.jobId ?? null, JSON.stringify(r.unitPrices), r.keyHasCap, r.expiresAt],
  });
  const row = rows[0];
  if (!row?.key_ok) return { ok: false, reason: "key_daily_spend_cap" };
  if (!row.reserved) return { ok: false, reason: await whyRefused(client, r) };
  return { ok: true, reservationId };
}

/**
 * The CTE `account` of both reservation statements: the account's reserved money and
 * day counters grow by the reservation, only when its balance and daily caps allow it
 * and `when` holds. Parameters: $1 account, $2 day, $3 amount (micros), $4 identifiers.
 */
function accountReservationCte(when = "TRUE"): string {
  return `account AS (
       UPDATE accounts SET reserved_micros = reserved_micros + $3::bigint,
              counter_day = $2::date,
              day_identifiers = (CASE WHEN counter_day = $2::date THEN day_identifiers ELSE 0 END) + $4::int,
              day_spend_micros = (CASE WHEN counter_day = $2::date THEN day_spend_micros ELSE 0 END) + $3::bigint
       WHERE id = $1 AND ${when}
         AND balance_micros - reserved_micros >= $3::bigint
         AND (daily_identifiers_cap IS NULL OR (CASE WHEN counter_day = $2::date THEN day_identifiers ELSE 0 END) + $4::int <= daily_identifiers_cap)
         AND (daily_spend_cap_micros IS NULL OR (CASE WHEN counter_day = $2::date THEN day_spend_micros ELSE 0 END) + $3::bigint <= daily_spend_cap_micros)
       RETURNING 1)`;
}

/** Which condition refused a reservation (caps are reported before the balance). */
async function whyRefused(client: pg.PoolClient, r: Pick<ReserveInput, "accountId" | "day" | "identifiers" | "amountMicros">): Promise<ReservationRefusal> {
  const { rows } = await client.query<{ available: bigint; ids: number; spend: bigint; ids_cap: number | null; spend_cap: bigint | null }>(
    `SELECT balance_micros - reserved_micros AS available,
            CASE WHEN counter_day = $2::date THEN day_identifiers ELSE 0 END AS ids,
            CASE WHEN counter_day = $2::date THEN day_spend_micros ELSE 0 END AS spend,
            daily_identifiers_cap AS ids_cap, daily_spend_cap_micros AS spend_cap
     FROM accounts WHERE id = $1`,
    [r.accountId, r.day],
  );
  const a = rows[0];
  if (!a) return "insufficient_balance";
  if (a.ids_cap !== null && a.ids + r.identifiers > a.ids_cap) return "daily_identifiers_cap";
  if (a.spend_cap !== null && a.spend + r.amountMicros > a.spend_cap) return "account_daily_spend_cap";
  return "insufficient_balance";
}

/**
 * Marks a cap as reached for today, once: true only for the first caller of the
 * day, who records the limits.cap_reached event.
 */
export async function markCapReached(
  client: pg.PoolClient,
  cap: "daily_identifiers_cap" | "account_daily_spend_cap" | "key_daily_spend_cap",
  ids: { accountId: string; apiKeyId: string },
  day: string,
): Promise<boolean> {
  const [table, column, id] =
    cap === "daily_identifiers_cap"
      ? ["accounts", "identifiers_cap_notified_on", ids.accountId]
      : cap === "account_daily_spend_cap"
        ? ["accounts", "spend_cap_notified_on", ids.accountId]
        : ["api_keys", "spend_cap_notified_on", ids.apiKeyId];
  const r = await client.query(`UPDATE ${table} SET ${column} = $2::date WHERE id = $1 AND ${column} IS DISTINCT FROM $2::date`, [id, day]);
  return r.rowCount === 1;
}

/** The daily caps that can hold a key's requests: its account's (identifiers, spend) and its own (spend), with the key's hint. */
export type KeyCaps = { ids: number | null; spend: bigint | null; key_spend: bigint | null; hint: string };

/** The caps of API key `keyId` and its account as they stand (null when there is no such key). */
export async function capsOfKey(sql: Sql, keyId: string): Promise<KeyCaps | null> {
  const { rows } = await sql.query<KeyCaps>(
    `SELECT a.daily_identifiers_cap AS ids, a.daily_spend_cap_micros AS spend, k.daily_spend_cap_micros AS key_spend, k.hint
     FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.id = $1`,
    [keyId],
  );
  return rows[0] ?? null;
}

/**
 * One request's transaction: `write` stores the request (lookup, job), then the
 * reservation is taken and committed while holding this process's turn on the
 * account, so the row lock is held for one UPDATE and the COMMIT, with at most one
 * waiter per process. Rolls back everything on refusal or error.
 */
export async function reserveAndCommit(
  pool: pg.Pool,
  turns: KeyedSemaphore,
  input: ReserveInput & { reservationId: string },
  write: (client: pg.PoolClient) => Promise<void>,
): Promise<{ ok: true; reservationId: string } | { ok: false; reason: ReservationRefusal }> {
  const client = await pool.connect();
  let open = false;
  try {
    await client.query("BEGIN");
    open = true;
    await write(client);
    return await turns.run(input.accountId, async () => {
      const r = await reserve(client, input);
      await client.query(r.ok ? "COMMIT" : "ROLLBACK");
      open = false;
      return r;
    });
  } finally {
    if (open) await client.query("ROLLBACK").catch(() => undefined);
    client.release();
  }
}

/**
 * A live lookup's whole write as one statement, outside any transaction: the account's
 * conditions and counters, then — only when they passed — the reservation row, the
 * lookup and its rows. One round trip instead of BEGIN, insert, reserve, COMMIT; a
 * single statement is all or nothing, and a refusal writes nothing at all (nothing is
 * written before the account's conditions are known, so there is nothing to roll back).
 * Only for a key without a daily spend cap (its counter would be written before the
 * account's conditions are known) and without an idempotency claim to bind: the
 * caller keeps `reserveAndCommit` for those. Runs under this process's turn on the
 * account like `reserveAndCommit`, so the row lock is held for this one statement.
 */
export async function reserveWithLookup(
  pool: pg.Pool,
  turns: KeyedSemaphore,
  input: ReserveInput & { reservationId: string; lookupId: string },
  l: NewLookup,
): Promise<{ ok: true; reservationId: string } | { ok: false; reason: ReservationRefusal }> {
  if (input.keyHasCap || l.usage) throw new Error("reserveWithLookup: a capped key or test usage needs reserveAndCommit");
  const client = await pool.connect();
  try {
    return await turns.run(input.accountId, async () => {
      const { rows } = await client.query<{ reserved: boolean }>({
        name: "reserve-with-lookup",
        text: `WITH ${accountReservationCte()},
     reservation AS (
       INSERT INTO reservations (id, account_id, api_key_id, lookup_id, job_id, amount_micros, unit_prices, day, expires_at)
       SELECT $6, $1, $5, $7, NULL, $3::bigint, $8::jsonb, $2::date, $9::timestamptz WHERE EXISTS (SELECT 1 FROM account)
       RETURNING 1),
     ${lookupInsertCtes(10, "EXISTS (SELECT 1 FROM account)")}
     SELECT EXISTS (SELECT 1 FROM reservation) AS reserved`,
        values: [
          input.accountId,
          input.day,
          input.amountMicros.toString(),
          input.identifiers,
          input.apiKeyId,
          input.reservationId,
          input.lookupId,
          JSON.stringify(input.unitPrices),
          input.expiresAt,
          ...lookupInsertValues(l),
        ],
      });
      if (rows[0]?.reserved) return { ok: true as const, reservationId: input.reservationId };
      return { ok: false as const, reason: await whyRefused(client, input) };
    });
  } finally {
    client.release();
  }
}

/** The reservation of a live lookup; null when it has none. */
export async function lookupReservationId(sql: Sql, lookupId: string): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM reservations WHERE lookup_id = $1`, [lookupId]);
  return rows[0]?.id ?? null;
}

/** The reservation of a live job; null when it has none. */
export async function jobReservationId(sql: Sql, jobId: string): Promise<string | null> {
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM reservations WHERE job_id = $1`, [jobId]);
  return rows[0]?.id ?? null;
}

/**
 * The account whose money a reservation holds; null when there is no such
 * reservation. Read before every settlement the billing-ledger runs (it takes its
 * turn per account): named, so each connection plans it once.
 */
export async function reservationAccountId(sql: Sql, reservationId: string): Promise<string | null> {
  const { rows } = await sql.query<{ account_id: string }>({
    name: "settle-reservation-account",
    text: `SELECT account_id FROM reservations WHERE id = $1`,
    values: [reservationId],
  });
  return rows[0]?.account_id ?? null;
}
