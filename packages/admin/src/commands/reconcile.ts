import { money } from "@svc/domain";
import { getAccount, reconcileAccount } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

/** ledger reconcile --account ID: the sum of ledger entries against the balance, and holds against open reservations. */
export async function ledgerReconcile(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const accountId = required(parseFlags(args, ["account"]), "account");
  if (!(await getAccount(ctx.store.pool, accountId))) throw new CliError(`no account with id "${accountId}"`);
  const r = await reconcileAccount(ctx.store.pool, accountId);
  const { rows } = await ctx.store.pool.query<{ kind: string; n: number; total: bigint }>(
    `SELECT t.kind, count(DISTINCT t.id)::int AS n, COALESCE(sum(e.amount_micros), 0)::bigint AS total
     FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id AND e.book = 'balance'
     WHERE t.account_id = $1 GROUP BY t.kind ORDER BY t.kind`,
    [accountId],
  );
  return {
    object: "reconciliation",
    account_id: accountId,
    balanced: r.balanced,
    balance: money(r.cachedBalanceMicros),
    ledger_balance: money(r.ledgerBalanceMicros),
    reserved: money(r.reservedMicros),
    open_reservations: money(r.openReservationsMicros),
    by_kind: Object.fromEntries(rows.map((k) => [k.kind, { transactions: k.n, amount: money(k.total) }])),
  };
}
