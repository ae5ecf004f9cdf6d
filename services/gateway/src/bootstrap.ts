import { hashApiKey, keyHint, PUBLIC_SANDBOX_KEY, SANDBOX_SCOPES } from "@svc/domain";
import { ensureSandboxKey, type Store } from "@svc/store";

/** Publishes the documented sandbox key under this deployment's secret (idempotent). */
export async function ensurePublicSandbox(store: Store, secret: string): Promise<void> {
  await ensureSandboxKey(store.pool, hashApiKey(secret, PUBLIC_SANDBOX_KEY), keyHint(PUBLIC_SANDBOX_KEY), [...SANDBOX_SCOPES]);
}
