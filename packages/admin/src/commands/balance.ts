import { randomUUID } from "node:crypto";
import { money, parseAmount } from "@svc/domain";
import { postBalanceChange, withTransaction } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../commands";

function signedAmount(text: string, allowNegative: boolean): bigint {
  const negative = text.startsWith("-");
  const value = parseAmount(negative ? text.slice(1) : text);
  if (value === null || (negative && !allowNegative)) {
    throw new CliError(`--amount must be ${allowNegative ? "an amount" : "a positive amount"} in USD with at most 6 decimals, e.g. 25 or ${allowNegative ? "-2.50" : "12.50"}`);
  }
  if (value === 0n) throw new CliError("--amount must not be zero");
  return negative ? -value : value;
}

/** balance topup|adjust --account ID --amount X --reason TEXT: a ledger transaction with its reason. */
export function balanceChange(kind: "topup" | "adjustment") {
  return async (args: string[], ctx: CliContext): Promise<Record<string, unknown>> => {
    const flags = parseFlags(args, ["account", "amount", "reason"]);
    const accountId = required(flags, "account");
    const amount = signedAmount(required(flags, "amount"), kind === "adjustment");
    const reason = required(flags, "reason");
    if (reason.length > 500) throw new CliError("--reason must be at most 500 characters");
    const reference = `${kind}:${randomUUID()}`;
    try {
      const { balanceMicros } = await withTransaction(ctx.store.pool, (client) => postBalanceChange(client, { accountId, kind, amountMicros: amount, reason, reference }));
      return { object: "balance_change", account_id: accountId, kind, amount: money(amount), reason, reference, balance: money(balanceMicros) };
    } catch (err) {
      const message = (err as Error).message;
      if (/account not found|below zero/.test(message)) throw new CliError(message === "account not found" ? `no account with id "${accountId}"` : message);
      throw err;
    }
  };
}
