import { generateApiKey, hashApiKey, keyHint, scopesForNewKey, type KeyMode, type Scope } from "@svc/domain";
import { createAccount, createStore, insertApiKey, type Store } from "@svc/store";

export type SeedOptions = {
  /** The KEY_HASH_SECRET of the services that will check the keys. */
  keyHashSecret: string;
  /** Default "test". */
  mode?: KeyMode;
  /** How many new keys (default 1; 0: the account alone). */
  count?: number;
  /** These keys instead of new ones (the same keys in a second database, a second build's). */
  keys?: readonly string[];
  /** Keys for this account; otherwise a new account is made. */
  accountId?: string;
  /** The new account's name (default "Test account") and balance (default 10 units of money). */
  name?: string;
  balanceMicros?: bigint;
  /** Default: every scope a key of its mode gets (agent keys: lookup:write). */
  scopes?: Scope[];
  allowIps?: string[];
  /** Default: none (agent keys: 5 units a day). */
  dailySpendCapMicros?: bigint | null;
  expiresAt?: Date | null;
};

export type SeededAccount = { accountId: string; keys: string[]; keyIds: string[] };

/**
 * An account with API keys of one mode, written straight to the store (as `npm run
 * admin -- account create` and `key create` would): the keys in the clear, for
 * requests, and their ids. `db` is a database URL (a small pool is opened and closed)
 * or a store's pool.
 */
export async function seedAccount(db: string | Store["pool"], options: SeedOptions): Promise<SeededAccount> {
  if (typeof db === "string") {
    const store = createStore({ databaseUrl: db, poolSize: 4, applicationName: "fleet-harness" });
    try {
      return await seedAccount(store.pool, options);
    } finally {
      await store.close();
    }
  }
  const mode = options.mode ?? "test";
  const accountId = options.accountId ?? (await createAccount(db, { name: options.name ?? "Test account", balanceMicros: options.balanceMicros ?? 10_000_000n })).id;
  const keys = options.keys ? [...options.keys] : Array.from({ length: options.count ?? 1 }, () => generateApiKey(mode));
  const row = {
    accountId,
    mode,
    scopes: scopesForNewKey(mode, options.scopes ?? (mode === "agent" ? ["lookup:write"] : undefined)),
    allowIps: options.allowIps ?? [],
    dailySpendCapMicros: options.dailySpendCapMicros ?? (mode === "agent" ? 5_000_000n : null),
    expiresAt: options.expiresAt ?? null,
  };
  // A few at a time: a bench's thousand keys take a second, not several.
  const keyIds: string[] = [];
  for (let i = 0; i < keys.length; i += 8) {
    const batch = keys.slice(i, i + 8);
    const made = await Promise.all(batch.map((key) => insertApiKey(db, { ...row, keyHash: hashApiKey(options.keyHashSecret, key), hint: keyHint(key) })));
    keyIds.push(...made.map((m) => m.id));
  }
  return { accountId, keys, keyIds };
}
