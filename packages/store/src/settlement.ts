import type pg from "pg";
import { idMonth, isBillable, money, type CheckResult, type IdentifierStatus, type UnitPrices } from "@svc/domain";
import { recordEvent } from "./events";
import { postLedgerTransaction, type LedgerLine } from "./ledger";

type ReservationRow = {
  id: string;
  account_id: string;
  api_key_id: string;
  lookup_id: string | null;
  job_id: string | null;
  amount_micros: bigint;
  charged_micros: bigint;
  released_micros: bigint;
  status: string;
  unit_prices: UnitPrices;
  day: string;
  expires_at: Date;
};

type Pair = { rowNo: number; check: string; charged: boolean; status: string; cached: boolean; price: bigint };

export type SettlementResult = { settledPairs: number; chargedMicros: bigint; releasedMicros: bigint; closed: boolean; eventIds: string[] };

const NOTHING: SettlementResult = { settledPairs: 0, chargedMicros: 0n, releasedMicros: 0n, closed: false, eventIds: [] };

/**
 * Settles a reservation, exactly once per (row, check), in the caller's
 * transaction: every final answer not settled yet is charged (a fresh conclusive
 * answer about a valid identifier) or released (anything else), posted to the
 * double-entry ledger, counted in usage, and the reservation is closed when its
 * work is finished (or `force`d by the sweeper), releasing whatever is left.
 * Running it again settles nothing twice: settlements are keyed by row and check
 * and the reservation row is locked for the whole transaction.
 *
 * Two callers: the billing-ledger (a request from requestSettlement in @svc/flows,
 * or its sweep), and settleFinishedJob, in the transaction that finishes a job.
 */
export async function settleReservation(
  client: pg.PoolClient,
  reservationId: string,
  now: Date,
  options: { force?: boolean; rows?: { first: number; last: number } } = {},
): Promise<SettlementResult> {
  // Every statement here runs on each settlement (each live lookup, each chunk): they are
  // named, so each connection parses and plans them once. Each name has one constant text.
  const { rows: found } = await client.query<ReservationRow>({
    name: "settle-reservation-lock",
    text: `SELECT id, account_id, api_key_id, lookup_id, job_id, amount_micros, charged_micros, released_micros, status, unit_prices,
            to_char(day, 'YYYY-MM-DD') AS day, expires_at
     FROM reservations WHERE id = $1 FOR UPDATE`,
    values: [reservationId],
  });
  const rsv = found[0];
  if (!rsv || rsv.status !== "open") return NOTHING;

  const parent = rsv.lookup_id
    ? await client.query<{ finished: boolean }>({ name: "settle-lookup-finished", text: `SELECT status = 'completed' AS finished FROM lookups WHERE id = $1 AND id_month = $2`, values: [rsv.lookup_id, idMonth(rsv.lookup_id)] })
    : // A cancelled job is finished only once its chunks in flight are done (they are billed).
      await client.query<{ finished: boolean }>({
        name: "settle-job-finished",
        text: `SELECT status IN ('completed', 'failed', 'cancelled') AND finished_at IS NOT NULL AS finished FROM jobs WHERE id = $1`,
        values: [rsv.job_id],
      });
  const finished = parent.rows[0]?.finished ?? true; // parent gone (purged): nothing more will come
  const closing = finished || options.force === true || rsv.expires_at <= now;
  // A chunk's settlement looks at its rows only; the closing one looks at everything left.
  const range = closing || !options.rows ? null : options.rows;

  // One text per shape (a lookup's or a job's rows; a range, or everything left), each
  // named: a generic plan keeps the row range as an index condition only when the
  // text has no `$n IS NULL OR` alternative.
  const owner = rsv.lookup_id ? "lookup" : "job";
  const ownerId = rsv.lookup_id ?? rsv.job_id ?? "";
  const { rows: resultRows } = await client.query<{ row_no: number; row_status: IdentifierStatus | null; checks: CheckResult[] }>(
    range === null
      ? { name: `settle-rows-left-${owner}`, text: settlementRowsSql(owner, "left"), values: [ownerId, rsv.id, idMonth(ownerId)] }
      : { name: `settle-rows-range-${owner}`, text: settlementRowsSql(owner, "range"), values: [ownerId, range.first, range.last, idMonth(ownerId)] },
  );
  // The settled checks of those rows only: a chunk's settlement must not read the whole job's settlements each time.
  const { rows: done } = range
    ? await client.query<{ row_no: number; check_code: string }>({
        name: "settle-done-range",
        text: `SELECT row_no, check_code FROM settlements WHERE reservation_id = $1 AND row_no BETWEEN $2 AND $3`,
        values: [rsv.id, range.first, range.last],
      })
    : await client.query<{ row_no: number; check_code: string }>({
        name: "settle-done-rows",
        text: `SELECT row_no, check_code FROM settlements WHERE reservation_id = $1 AND row_no = ANY($2::int[])`,
        values: [rsv.id, resultRows.map((r) => r.row_no)],
      });
  const settled = new Set(done.map((d) => `${d.row_no}|${d.check_code}`));

  const pairs: Pair[] = [];
  for (const row of resultRows) {
    for (const c of row.checks) {
      if (c.status === "pending" || settled.has(`${row.row_no}|${c.service}`)) continue;
      const price = BigInt(rsv.unit_prices[c.service] ?? "0");
      pairs.push({ rowNo: row.row_no, check: c.service, charged: isBillable(row.row_status, c), status: c.status, cached: c.cached, price });
    }
  }

  const charged = pairs.filter((p) => p.charged).reduce((s, p) => s + p.price, 0n);
  let released = pairs.filter((p) => !p.charged).reduce((s, p) => s + p.price, 0n);
  if (pairs.length > 0) {
    await client.query({
      name: "settle-insert-settlements",
      text: `INSERT INTO settlements (reservation_id, row_no, check_code, outcome, amount_micros, created_at)
       SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[])`,
      values: [rsv.id, pairs.map((p) => p.rowNo), pairs.map((p) => p.check), pairs.map((p) => (p.charged ? "charged" : "released")), pairs.map((p) => p.price.toString()), pairs.map(() => now)],
    });
  }
  if (charged > 0n) {
    const byCheck = new Map<string, bigint>();
    for (const p of pairs) if (p.charged) byCheck.set(p.check, (byCheck.get(p.check) ?? 0n) + p.price);
    const lines: LedgerLine[] = [];
    for (const [check, amount] of byCheck) {
      lines.push({ book: "balance", amountMicros: -amount, checkCode: check }, { book: "revenue", amountMicros: amount, checkCode: check });
    }
    // Each (row, check) is settled once, so a settlement's first charged pair names it uniquely.
    const first = pairs.find((p) => p.charged) as Pair;
    await postLedgerTransaction(client, { accountId: rsv.account_id, kind: "charge", reference: `charge:${rsv.id}:${first.rowNo}:${first.check}`, lines }, { applyBalance: false });
  }

  const remaining = rsv.amount_micros - rsv.charged_micros - rsv.released_micros - charged - released;
  const close = closing;
  if (close && remaining > 0n) released += remaining;
  await client.query({
    name: "settle-update-reservation",
    text: `UPDATE reservations SET charged_micros = charged_micros + $2, released_micros = released_micros + $3,
            status = CASE WHEN $4 THEN 'closed' ELSE status END, closed_at = CASE WHEN $4 THEN $5 ELSE closed_at END
     WHERE id = $1`,
    values: [rsv.id, charged.toString(), released.toString(), close, now],
  });
  await client.query({
    name: "settle-update-key-spend",
    text: `UPDATE api_keys SET day_spend_micros = CASE WHEN counter_day = $2::date THEN GREATEST(0, day_spend_micros - $3::bigint) ELSE day_spend_micros END
     WHERE id = $1 AND counter_day = $2::date`,
    values: [rsv.api_key_id, rsv.day, released.toString()],
  });
  await recordUsage(client, rsv, pairs);

  // Last, the account row (the one hot spot of a busy account), in one UPDATE:
  // charge the balance, stop holding what was settled, and stop counting released
  // money as today's spend. The row stays locked until COMMIT, so what it returns
  // is current: a balance.low crossing is noted (and its event recorded) once.
  const { rows: accountRows } = await client.query<{ balance_micros: bigint; low_balance_threshold_micros: bigint | null; low_balance_notified_at: Date | null }>({
    name: "settle-update-account",
    text: `UPDATE accounts SET balance_micros = balance_micros - $2::bigint,
            reserved_micros = reserved_micros - $2::bigint - $3::bigint,
            day_spend_micros = CASE WHEN counter_day = $4::date THEN GREATEST(0, day_spend_micros - $3::bigint) ELSE day_spend_micros END
     WHERE id = $1
     RETURNING balance_micros, low_balance_threshold_micros, low_balance_notified_at`,
    values: [rsv.account_id, charged.toString(), released.toString(), rsv.day],
  });
  const account = accountRows[0];
  const eventIds: string[] = [];
  if (charged > 0n && account && account.low_balance_threshold_micros !== null && account.balance_micros < account.low_balance_threshold_micros && !account.low_balance_notified_at) {
    await client.query(`UPDATE accounts SET low_balance_notified_at = $2 WHERE id = $1`, [rsv.account_id, now]);
    eventIds.push(
      await recordEvent(client, {
        accountId: rsv.account_id,
        livemode: true,
        type: "balance.low",
        endpointId: null,
        createdAt: now,
        data: { object: "account", balance: money(account.balance_micros), threshold: money(account.low_balance_threshold_micros) },
      }),
    );
  }
  return { settledPairs: pairs.length, chargedMicros: charged, releasedMicros: released, closed: close, eventIds };
}

/**
 * The result rows a settlement reads: rows with a final check, of a lookup or a job,
 * either in a chunk's range (`$2`..`$3`; mostly unsettled, read as they are) or all
 * of them with a final check not settled yet (`$2` the reservation): closing a large
 * job whose chunks were settled then reads next to nothing, which matters as a job
 * is settled in the transaction that finishes it. Rows whose stored checks cannot be
 * read settle nothing; closing releases their money.
 */
function settlementRowsSql(owner: "lookup" | "job", shape: "range" | "left"): string {
  const unsettled =
    shape === "left" ? `AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.reservation_id = $2 AND s.row_no = r.row_no AND s.check_code = c->>'service')` : "";
  return `SELECT r.row_no, COALESCE(r.number_status, r.email_status) AS row_status, r.checks
     FROM result_rows r
     WHERE r.${owner}_id = $1 AND r.id_month = ${shape === "range" ? "$4" : "$3"} ${shape === "range" ? "AND r.row_no BETWEEN $2 AND $3" : ""}
       AND jsonb_typeof(r.checks) = 'array'
       AND EXISTS (SELECT 1 FROM jsonb_array_elements(r.checks) c WHERE c->>'status' <> 'pending' ${unsettled})`;
}

/** Live usage per key, day and check: checks, conclusive, cached, billed units and cost. */
async function recordUsage(client: pg.PoolClient, rsv: ReservationRow, pairs: Pair[]): Promise<void> {
  if (pairs.length === 0) return;
  const byCheck = new Map<string, { checks: number; conclusive: number; cached: number; billed: number; cost: bigint }>();
  for (const p of pairs) {
    const u = byCheck.get(p.check) ?? { checks: 0, conclusive: 0, cached: 0, billed: 0, cost: 0n };
    u.checks += 1;
    if (p.status === "ok") u.conclusive += 1;
    if (p.cached) u.cached += 1;
    if (p.charged) {
      u.billed += 1;
      u.cost += p.price;
    }
    byCheck.set(p.check, u);
  }
  const entries = [...byCheck.entries()];
  await client.query({
    name: "settle-record-usage",
    text: `INSERT INTO daily_usage AS d (account_id, api_key_id, day, livemode, check_code, checks, conclusive, cached, billed_units, cost_micros)
     SELECT $1, $2, $3::date, true, * FROM unnest($4::text[], $5::int[], $6::int[], $7::int[], $8::int[], $9::bigint[])
     ON CONFLICT (account_id, api_key_id, day, livemode, check_code) DO UPDATE SET
       checks = d.checks + EXCLUDED.checks, conclusive = d.conclusive + EXCLUDED.conclusive, cached = d.cached + EXCLUDED.cached,
       billed_units = d.billed_units + EXCLUDED.billed_units, cost_micros = d.cost_micros + EXCLUDED.cost_micros`,
    values: [
      rsv.account_id,
      rsv.api_key_id,
      rsv.day,
      entries.map(([c]) => c),
      entries.map(([, u]) => u.checks),
      entries.map(([, u]) => u.conclusive),
      entries.map(([, u]) => u.cached),
      entries.map(([, u]) => u.billed),
      entries.map(([, u]) => u.cost.toString()),
    ],
  });
}

/**
 * Open reservations that need settling: their work finished, or they expired.
 * Jobs settle in the transaction that finishes them (settleFinishedJob): a finished
 * job here is one that finished before that was so.
 */
export async function reservationsToSweep(sql: Pick<pg.Pool, "query">, now: Date, limit = 200): Promise<string[]> {
  const { rows } = await sql.query<{ id: string }>(
    `SELECT r.id FROM reservations r
     LEFT JOIN lookups l ON l.id = r.lookup_id
     LEFT JOIN jobs j ON j.id = r.job_id
     WHERE r.status = 'open'
       AND (r.expires_at <= $1 OR l.status = 'completed' OR (j.status IN ('completed', 'failed', 'cancelled') AND j.finished_at IS NOT NULL)
            OR (r.lookup_id IS NOT NULL AND l.id IS NULL) OR (r.job_id IS NOT NULL AND j.id IS NULL))
     ORDER BY r.created_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Finished chunks of jobs still in progress that no settlement has touched since
 * before `doneBefore`: their `settle.reservation` message was lost (Redis emptied,
 * a ledger killed with it). Settling them now, not at the job's end, keeps a long
 * job's charges current; settling is per (row, check), so a late message settles
 * nothing twice.
 */
export async function unsettledChunks(
  sql: Pick<pg.Pool, "query">,
  doneBefore: Date,
  limit = 200,
): Promise<Array<{ reservation_id: string; first_row: number; last_row: number }>> {
  const { rows } = await sql.query<{ reservation_id: string; first_row: number; last_row: number }>(
    `SELECT r.id AS reservation_id, c.first_row, c.last_row
     FROM jobs j
     JOIN reservations r ON r.job_id = j.id AND r.status = 'open'
     JOIN job_chunks c ON c.job_id = j.id AND c.status = 'done' AND c.updated_at < $1
     WHERE j.status IN ('queued', 'running', 'cancelled') AND j.finished_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.reservation_id = r.id AND s.row_no BETWEEN c.first_row AND c.last_row)
     ORDER BY c.updated_at LIMIT $2`,
    [doneBefore, limit],
  );
  return rows;
}

/**
 * The ledger's lag in seconds: how long the oldest settlement that is due has been
 * waiting — an open reservation whose lookup completed or whose job finished (since
 * then), or that expired (since its expiry), or a finished chunk of a running job
 * with nothing settled (since the chunk finished). 0 when nothing is due. The same
 * conditions as `reservationsToSweep` and `unsettledChunks`.
 */
export async function oldestDueSettlementSeconds(sql: Pick<pg.Pool, "query">, now: Date): Promise<number> {
  const { rows } = await sql.query<{ since: Date | null }>(
    `SELECT min(since) AS since FROM (
       SELECT min(CASE
                    WHEN l.status = 'completed' THEN COALESCE(l.completed_at, r.created_at)
                    WHEN j.status IN ('completed', 'failed', 'cancelled') AND j.finished_at IS NOT NULL THEN j.finished_at
                    WHEN (r.lookup_id IS NOT NULL AND l.id IS NULL) OR (r.job_id IS NOT NULL AND j.id IS NULL) THEN r.created_at
                    ELSE r.expires_at END) AS since
       FROM reservations r
       LEFT JOIN lookups l ON l.id = r.lookup_id
       LEFT JOIN jobs j ON j.id = r.job_id
       WHERE r.status = 'open'
         AND (r.expires_at <= $1 OR l.status = 'completed' OR (j.status IN ('completed', 'failed', 'cancelled') AND j.finished_at IS NOT NULL)
              OR (r.lookup_id IS NOT NULL AND l.id IS NULL) OR (r.job_id IS NOT NULL AND j.id IS NULL))
       UNION ALL
       SELECT min(c.updated_at)
       FROM jobs j
       JOIN reservations r ON r.job_id = j.id AND r.status = 'open'
       JOIN job_chunks c ON c.job_id = j.id AND c.status = 'done'
       WHERE j.status IN ('queued', 'running', 'cancelled') AND j.finished_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.reservation_id = r.id AND s.row_no BETWEEN c.first_row AND c.last_row)
     ) due`,
    [now],
  );
  const since = rows[0]?.since;
  return since ? Math.max(0, (now.getTime() - since.getTime()) / 1000) : 0;
}
