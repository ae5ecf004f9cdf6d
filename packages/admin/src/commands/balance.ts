import { randomUUID } from "node:crypto";
import { money, parseAmount } from "@svc/domain";
import { postBalanceChange, withTransaction } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

function signedAmount(text: string, allowNegative: boolean): bigint {
  const negative = text.startsWith("-");
  const value = parseAmount(negative ? text.slice(1) : text);
  if (value === null || (negative && !allowNegative)) {
    throw new CliError(`--amount must be ${allowNegative ? "an amount" : "a positive amount"} in USD with at most 6 decimals, e.g. 25 or ${allowNegative ? "-2.50" : "12.50"}`);
  }
  if (value === 0n) throw new CliError("--amount must not be zero");
  return negative ? -value : value;
}

/**
 * balance topup|adjust --account ID --amount X --reason TEXT [--reference REF]: a
 * ledger transaction with its reason. With --reference (e.g. the wire's id), running
 * the command again — after a timeout, say — changes nothing (`applied: false`).
 */
export function balanceChange(kind: "topup" | "adjustment") {
  return async (args: string[], ctx: CliContext): Promise<Record<string, unknown>> => {
    const flags = parseFlags(args, ["account", "amount", "reason", "reference"]);
    const accountId = required(flags, "account");
    const amount = signedAmount(required(flags, "amount"), kind === "adjustment");
    const reason = required(flags, "reason");
    if (reason.length > 500) throw new CliError("--reason must be at most 500 characters");
    const given = flags.reference;
    if (given !== undefined && !/^[\x21-\x7e]{1,100}$/.test(given)) throw new CliError("--reference must be 1 to 100 printable characters without spaces");
    const reference = `${kind}:${accountId}:${given ?? randomUUID()}`;
    try {
      const { balanceMicros, applied, amountMicros } = await withTransaction(ctx.store.pool, (client) => postBalanceChange(client, { accountId, kind, amountMicros: amount, reason, reference }));
      return { object: "balance_change", account_id: accountId, kind, amount: money(amountMicros), reason, reference, applied, balance: money(balanceMicros) };
    } catch (err) {
      const message = (err as Error).message;
      if (/account not found|below zero/.test(message)) throw new CliError(message === "account not found" ? `no account with id "${accountId}"` : message);
      throw err;
    }
  };
}
