import type { KeyMode, Scope } from "@svc/domain";
import { seedAccount } from "@svc/fleet-harness";
import type { Store } from "@svc/store";

export type TestKey = { key: string; keyId: string; accountId: string };

/** An account with one key, created straight in the store (@svc/fleet-harness; the CLI has its own tests). */
export async function accountWithKey(
  store: Store,
  secret: string,
  options: { mode?: KeyMode; scopes?: Scope[]; allowIps?: string[]; balanceMicros?: bigint; expiresAt?: Date | null; accountId?: string; dailySpendCapMicros?: bigint | null } = {},
): Promise<TestKey> {
  const { keys, keyIds, accountId } = await seedAccount(store.pool, { keyHashSecret: secret, ...options });
  return { key: keys[0]!, keyId: keyIds[0]!, accountId };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
