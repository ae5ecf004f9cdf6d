import { money } from "@svc/domain";
import { getAccount, ledgerTotalsByKind, reconcileAccount } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

/** ledger reconcile --account ID: the sum of ledger entries against the balance, and holds against open reservations. */
export async function ledgerReconcile(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const accountId = required(parseFlags(args, ["account"]), "account");
  if (!(await getAccount(ctx.store.pool, accountId))) throw new CliError(`no account with id "${accountId}"`);
  const r = await reconcileAccount(ctx.store.pool, accountId);
  const kinds = await ledgerTotalsByKind(ctx.store.pool, accountId);
  return {
    object: "reconciliation",
    account_id: accountId,
    balanced: r.balanced,
    balance: money(r.cachedBalanceMicros),
    ledger_balance: money(r.ledgerBalanceMicros),
    reserved: money(r.reservedMicros),
    open_reservations: money(r.openReservationsMicros),
    by_kind: Object.fromEntries(kinds.map((k) => [k.kind, { transactions: k.transactions, amount: money(k.amountMicros) }])),
  };
}
