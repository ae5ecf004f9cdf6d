import {
  canonicalAllowEntry,
  generateApiKey,
  hashApiKey,
  isScope,
  keyHint,
  money,
  parseAmount,
  scopesForNewKey,
  type KeyMode,
  type Scope,
} from "@svc/domain";
import { accountRequiresIpAllowlist, getAccount, insertApiKey } from "@svc/store";
import { CliError, list, parseFlags, required } from "../args";
import type { CliContext } from "../context";

const MODES: readonly KeyMode[] = ["test", "live", "agent"];

/**
 * key create: prints the plaintext key once (only a keyed hash is stored). Agent
 * keys need explicit scopes and a daily spend cap; accounts that require an
 * allowlist get no live or agent key without one.
 */
export async function keyCreate(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const flags = parseFlags(args, ["account", "mode", "scopes", "allow-ip", "daily-spend-cap", "expires-at"]);
  const accountId = required(flags, "account");
  const mode = required(flags, "mode") as KeyMode;
  if (!MODES.includes(mode)) throw new CliError("--mode must be test, live or agent");

  const requested = list(flags.scopes);
  const unknown = requested.find((s) => !isScope(s));
  if (unknown !== undefined) throw new CliError(`unknown scope "${unknown}"; scopes are lookup:write, jobs:write, jobs:read, jobs:read_all, account:read, webhooks:manage`);
  if (flags.scopes !== undefined && requested.length === 0) throw new CliError("--scopes must list at least one scope");
  let scopes: Scope[];
  try {
    scopes = scopesForNewKey(mode, requested.length ? (requested as Scope[]) : undefined);
  } catch (err) {
    throw new CliError((err as Error).message);
  }

  const allowIps = list(flags["allow-ip"]).map((entry) => {
    const canonical = canonicalAllowEntry(entry);
    if (!canonical) throw new CliError(`--allow-ip entry "${entry}" is not an IPv4/IPv6 address or CIDR range`);
    return canonical;
  });

  let dailySpendCap: bigint | null = null;
  if (flags["daily-spend-cap"] !== undefined) {
    dailySpendCap = parseAmount(flags["daily-spend-cap"].trim());
    if (dailySpendCap === null) throw new CliError("--daily-spend-cap must be an amount in USD, e.g. 10 or 2.50");
  }
  if (mode === "agent" && dailySpendCap === null) throw new CliError("agent keys need --daily-spend-cap");

  let expiresAt: Date | null = null;
  if (flags["expires-at"] !== undefined) {
    const text = flags["expires-at"].trim();
    expiresAt = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(text) ? new Date(text) : new Date(NaN);
    if (Number.isNaN(expiresAt.getTime())) throw new CliError("--expires-at must be an ISO 8601 date-time, e.g. 2027-01-31T00:00:00Z");
    if (expiresAt <= ctx.now()) throw new CliError("--expires-at must be in the future");
  }

  const account = await getAccount(ctx.store.pool, accountId);
  if (!account) throw new CliError(`no account with id "${accountId}"`);
  if (mode !== "test" && allowIps.length === 0 && (await accountRequiresIpAllowlist(ctx.store.pool, accountId))) {
    throw new CliError("this account requires an --allow-ip list on live and agent keys");
  }

  return issueKey(ctx.store.pool, ctx.secret, { accountId, mode, scopes, allowIps, dailySpendCapMicros: dailySpendCap, expiresAt });
}

export type NewKey = { accountId: string; mode: KeyMode; scopes: Scope[]; allowIps: string[]; dailySpendCapMicros: bigint | null; expiresAt: Date | null };

/**
 * Makes a key and stores only its keyed hash; answers the key itself, shown this once.
 * `key create` and `live-access approve` both issue keys through it.
 */
export async function issueKey(sql: Parameters<typeof insertApiKey>[0], secret: string, k: NewKey): Promise<Record<string, unknown> & { id: string; key: string }> {
  const key = generateApiKey(k.mode);
  const created = await insertApiKey(sql, { ...k, keyHash: hashApiKey(secret, key), hint: keyHint(key) });
  return {
    object: "api_key",
    id: created.id,
    account_id: k.accountId,
    mode: k.mode,
    key,
    scopes: k.scopes,
    allow_ips: k.allowIps,
    daily_spend_cap: k.dailySpendCapMicros === null ? null : money(k.dailySpendCapMicros),
    expires_at: k.expiresAt ? k.expiresAt.toISOString() : null,
    created_at: created.created_at.toISOString(),
  };
}
