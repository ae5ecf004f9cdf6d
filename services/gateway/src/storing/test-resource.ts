import type pg from "pg";
import { bindIdempotentResource, withTransaction, type IdempotencyClaimRef } from "@svc/store";
import type { Deps } from "../deps";

/**
 * Stores a test-mode lookup or job. Under an Idempotency-Key it is bound to the
 * request's claim in the same transaction, as live resources are with their money:
 * a retry after a failure past this point answers with it rather than making (and
 * counting in usage) a second one. Test mode charges nothing, so a claim lost to a
 * takeover is not an error here.
 */
export async function storeTestResource(
  deps: Pick<Deps, "store">,
  /** The request's Idempotency-Key claim, if it holds one. */
  claim: IdempotencyClaimRef | undefined,
  id: string,
  store: (client: pg.PoolClient) => Promise<void>,
  /** How to store it when there is no claim to bind (the hot path: test lookups are group-committed). */
  unbound?: () => Promise<void>,
): Promise<void> {
  if (!claim && unbound) return unbound();
  await withTransaction(deps.store.pool, async (client) => {
    await store(client);
    if (claim) await bindIdempotentResource(client, claim, id);
  });
}
