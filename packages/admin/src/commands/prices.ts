import { CHECK_CODES, money, parseAmount, resolveCheck, type CheckCode } from "@svc/domain";
import { getAccount, setAccountCheck, setLivePrice } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

function checkFlag(value: string): CheckCode {
  const code = resolveCheck(value);
  if (!code) throw new CliError(`unknown check "${value}"; checks are ${CHECK_CODES.join(", ")}`);
  return code;
}

/**
 * price set --check CODE --amount X [--account ID]: the live price per conclusive
 * answer, for everyone or as one account's override (`--amount default` removes it).
 */
export async function priceSet(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const flags = parseFlags(args, ["check", "amount", "account"]);
  const check = checkFlag(required(flags, "check"));
  const text = required(flags, "amount");
  const accountId = flags.account;
  if (text === "default") {
    if (!accountId) throw new CliError("--amount default removes an account override and needs --account");
  }
  const amount = text === "default" ? null : parseAmount(text);
  if (text !== "default" && amount === null) throw new CliError("--amount must be an amount in USD with at most 6 decimals, e.g. 0.002");
  if (accountId) {
    if (!(await getAccount(ctx.store.pool, accountId))) throw new CliError(`no account with id "${accountId}"`);
    await setAccountCheck(ctx.store.pool, { accountId, checkCode: check, livePriceMicros: amount });
    return { object: "price", check, account_id: accountId, live: amount === null ? null : money(amount), override: amount !== null };
  }
  await setLivePrice(ctx.store.pool, check, amount as bigint);
  return { object: "price", check, account_id: null, live: money(amount as bigint) };
}

/** check enable|disable --account ID --check CODE: per-account switch (e.g. number.hlr). */
export function checkSwitch(enabled: boolean) {
  return async (args: string[], ctx: CliContext): Promise<Record<string, unknown>> => {
    const flags = parseFlags(args, ["account", "check"]);
    const accountId = required(flags, "account");
    const check = checkFlag(required(flags, "check"));
    if (!(await getAccount(ctx.store.pool, accountId))) throw new CliError(`no account with id "${accountId}"`);
    await setAccountCheck(ctx.store.pool, { accountId, checkCode: check, enabled });
    return { object: "account_check", account_id: accountId, check, enabled };
  };
}
