import { money, parseAmount } from "@svc/domain";
import { createAccount, getAccount } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

/** account create --name NAME --balance AMOUNT: the opening balance is a ledger top-up. */
export async function accountCreate(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const flags = parseFlags(args, ["name", "balance"]);
  const name = required(flags, "name");
  if (name.length > 200) throw new CliError("--name must be at most 200 characters");
  const balance = parseAmount(required(flags, "balance"));
  if (balance === null) throw new CliError("--balance must be a non-negative amount in USD with at most 6 decimals, e.g. 25 or 12.50");
  const { id } = await createAccount(ctx.store.pool, { name, balanceMicros: balance });
  const account = await getAccount(ctx.store.pool, id);
  if (!account) throw new Error("account vanished after creation");
  return {
    object: "account",
    id,
    name: account.name,
    balance: money(account.balance_micros),
    retention_days: account.retention_days,
  };
}
