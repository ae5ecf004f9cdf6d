import { generateApiKey, hashApiKey, keyHint, scopesForNewKey, type KeyMode, type Scope } from "@svc/domain";
import { createAccount, insertApiKey, type Store } from "@svc/store";

export type TestKey = { key: string; keyId: string; accountId: string };

/** An account with one key, created straight in the store (the CLI has its own tests). */
export async function accountWithKey(
  store: Store,
  secret: string,
  options: { mode?: KeyMode; scopes?: Scope[]; allowIps?: string[]; balanceMicros?: bigint; expiresAt?: Date | null; accountId?: string; dailySpendCapMicros?: bigint | null } = {},
): Promise<TestKey> {
  const mode = options.mode ?? "test";
  const accountId = options.accountId ?? (await createAccount(store.pool, { name: "Test account", balanceMicros: options.balanceMicros ?? 10_000_000n })).id;
  const key = generateApiKey(mode);
  const created = await insertApiKey(store.pool, {
    accountId,
    mode,
    keyHash: hashApiKey(secret, key),
    hint: keyHint(key),
    scopes: scopesForNewKey(mode, options.scopes ?? (mode === "agent" ? ["lookup:write"] : undefined)),
    allowIps: options.allowIps ?? [],
    dailySpendCapMicros: options.dailySpendCapMicros ?? (mode === "agent" ? 5_000_000n : null),
    expiresAt: options.expiresAt ?? null,
  });
  return { key, keyId: created.id, accountId };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
