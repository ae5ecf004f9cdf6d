import type { Sql } from "./db";

/** One kind of ledger transaction on an account: how many, and their sum on the balance book. */
export type LedgerKindTotal = { kind: string; transactions: number; amountMicros: bigint };

/** The account's balance-book postings summed per transaction kind, in kind order (the operator's reconciliation report). */
export async function ledgerTotalsByKind(sql: Sql, accountId: string): Promise<LedgerKindTotal[]> {
  const { rows } = await sql.query<{ kind: string; n: number; total: bigint }>(
    `SELECT t.kind, count(DISTINCT t.id)::int AS n, COALESCE(sum(e.amount_micros), 0)::bigint AS total
     FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.book = 'balance'
     WHERE t.account_id = $1 GROUP BY t.kind ORDER BY t.kind`,
    [accountId],
  );
  return rows.map((r) => ({ kind: r.kind, transactions: r.n, amountMicros: r.total }));
}
