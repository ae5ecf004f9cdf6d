import type pg from "pg";
import { newId } from "@svc/domain";

export type Book = "balance" | "revenue" | "funding";
export type LedgerLine = { book: Book; amountMicros: bigint; checkCode?: string | null; livemode?: boolean };

/**
 * Posts one balanced transaction (entries sum to zero) and moves the account's
 * cached balance by the `balance` book's share (unless `applyBalance` is false),
 * in the caller's transaction.
 * `reference` is unique: posting the same reference twice is a no-op that returns
 * false, which is what makes settlements and top-ups idempotent.
 */
export async function postLedgerTransaction(
  client: pg.PoolClient,
  tx: { accountId: string; kind: "topup" | "adjustment" | "charge"; reference: string; reason?: string | null; lines: LedgerLine[] },
  options: { applyBalance?: boolean } = {},
): Promise<boolean> {
  const sum = tx.lines.reduce((s, l) => s + l.amountMicros, 0n);
  if (sum !== 0n) throw new Error("ledger transaction does not balance");
  const id = newId("ledgerTransaction");
  // Named (parsed once per connection): a charge is posted by every settlement that charges.
  const inserted = await client.query({
    name: "ledger-insert-transaction",
    text: `INSERT INTO ledger_transactions (id, account_id, kind, reference, reason) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (reference) DO NOTHING RETURNING id`,
    values: [id, tx.accountId, tx.kind, tx.reference, tx.reason ?? null],
  });
  if (inserted.rowCount === 0) return false;
  await client.query({
    name: "ledger-insert-entries",
    text: `INSERT INTO ledger_entries (transaction_id, account_id, book, amount_micros, check_code, livemode)
     SELECT $1, $2, book, amount, check_code, livemode
     FROM unnest($3::text[], $4::bigint[], $5::text[], $6::boolean[]) AS t(book, amount, check_code, livemode)`,
    values: [
      id,
      tx.accountId,
      tx.lines.map((l) => l.book),
      tx.lines.map((l) => l.amountMicros.toString()),
      tx.lines.map((l) => l.checkCode ?? null),
      tx.lines.map((l) => l.livemode ?? true),
    ],
  });
  const balanceDelta = tx.lines.filter((l) => l.book === "balance").reduce((s, l) => s + l.amountMicros, 0n);
  // Callers that touch the account row anyway (settlement) apply the delta in their own final UPDATE.
  if (balanceDelta !== 0n && options.applyBalance !== false) {
    await client.query(`UPDATE accounts SET balance_micros = balance_micros + $2 WHERE id = $1`, [tx.accountId, balanceDelta.toString()]);
  }
  return true;
}

/** Sum of the `balance` book against the cached balance, for reconciliation. */
export async function reconcileAccount(
  sql: Pick<pg.Pool, "query">,
  accountId: string,
): Promise<{ ledgerBalanceMicros: bigint; cachedBalanceMicros: bigint; reservedMicros: bigint; openReservationsMicros: bigint; balanced: boolean }> {
  const { rows } = await sql.query<{ ledger: bigint; cached: bigint; reserved: bigint; open: bigint }>(
    `SELECT
       COALESCE((SELECT sum(amount_micros) FROM ledger_entries WHERE account_id = a.id AND book = 'balance'), 0)::bigint AS ledger,
       a.balance_micros AS cached,
       a.reserved_micros AS reserved,
       COALESCE((SELECT sum(amount_micros - charged_micros - released_micros) FROM reservations WHERE account_id = a.id AND status = 'open'), 0)::bigint AS open
     FROM accounts a WHERE a.id = $1`,
    [accountId],
  );
  const r = rows[0];
  if (!r) throw new Error("account not found");
  return {
    ledgerBalanceMicros: r.ledger,
    cachedBalanceMicros: r.cached,
    reservedMicros: r.reserved,
    openReservationsMicros: r.open,
    balanced: r.ledger === r.cached && r.reserved === r.open,
  };
}

/**
 * The reconciliation of `reconcileAccount` over every account at once, for the
 * ledger's imbalance gauge: the sum over accounts of |ledger balance - cached
 * balance| + |reserved - open reservations|, and how many accounts differ. One
 * statement, so one snapshot: a settlement committing meanwhile is seen whole or
 * not at all. It reads every ledger entry: run it every few minutes, not per scrape.
 */
export async function reconcileAllAccounts(sql: Pick<pg.Pool, "query">): Promise<{ imbalanceMicros: bigint; unbalancedAccounts: number }> {
  const { rows } = await sql.query<{ imbalance: bigint; unbalanced: number }>(
    `WITH ledger AS (SELECT account_id, sum(amount_micros) AS total FROM ledger_entries WHERE book = 'balance' GROUP BY account_id),
          open AS (SELECT account_id, sum(amount_micros - charged_micros - released_micros) AS total FROM reservations WHERE status = 'open' GROUP BY account_id),
          diff AS (
            SELECT abs(COALESCE(l.total, 0) - a.balance_micros) + abs(a.reserved_micros - COALESCE(o.total, 0)) AS off
            FROM accounts a LEFT JOIN ledger l ON l.account_id = a.id LEFT JOIN open o ON o.account_id = a.id)
     SELECT COALESCE(sum(off), 0)::bigint AS imbalance, count(*) FILTER (WHERE off <> 0)::int AS unbalanced FROM diff`,
  );
  return { imbalanceMicros: rows[0]?.imbalance ?? 0n, unbalancedAccounts: rows[0]?.unbalanced ?? 0 };
}

/**
 * Moves money into or out of an account's balance from outside (top-up, manual
 * adjustment), with a reason kept in the ledger. Refuses to take the balance below
 * zero. A balance back at or above the low-balance threshold re-arms balance.low.
 */
export async function postBalanceChange(
  client: pg.PoolClient,
  c: { accountId: string; kind: "topup" | "adjustment"; amountMicros: bigint; reason: string; reference: string },
): Promise<{ balanceMicros: bigint; applied: boolean; amountMicros: bigint }> {
  const { rows } = await client.query<{ balance_micros: bigint }>(`SELECT balance_micros FROM accounts WHERE id = $1 FOR UPDATE`, [c.accountId]);
  const current = rows[0];
  if (!current) throw new Error("account not found");
  // A reference already posted (an operator re-running a command) changes nothing,
  // and says what the first run posted.
  const { rows: posted } = await client.query<{ amount: bigint }>(
    `SELECT e.amount_micros AS amount FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.book = 'balance'
     WHERE t.reference = $1 AND t.account_id = $2`,
    [c.reference, c.accountId],
  );
  if (posted[0]) return { balanceMicros: current.balance_micros, applied: false, amountMicros: BigInt(posted[0].amount) };
  if (current.balance_micros + c.amountMicros < 0n) throw new Error("the balance cannot go below zero");
  const applied = await postLedgerTransaction(client, {
    accountId: c.accountId,
    kind: c.kind,
    reference: c.reference,
    reason: c.reason,
    lines: [
      { book: "balance", amountMicros: c.amountMicros },
      { book: "funding", amountMicros: -c.amountMicros },
    ],
  });
  const after = await client.query<{ balance_micros: bigint }>(
    `UPDATE accounts SET low_balance_notified_at = CASE
       WHEN low_balance_threshold_micros IS NULL OR balance_micros >= low_balance_threshold_micros THEN NULL ELSE low_balance_notified_at END
     WHERE id = $1 RETURNING balance_micros`,
    [c.accountId],
  );
  return { balanceMicros: (after.rows[0] as { balance_micros: bigint }).balance_micros, applied, amountMicros: c.amountMicros };
}
