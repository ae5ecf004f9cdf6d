import type { CheckCode } from "@svc/domain";
import { checkOffers, type CheckOffer } from "@svc/store";
import type { Deps } from "../context";

/** Prices and switches for an account (or the public catalog), from the cache when fresh. */
export async function offersFor(deps: Deps, accountId: string | null): Promise<Map<CheckCode, CheckOffer>> {
  const cacheKey = accountId ?? "";
  const cached = deps.caches.offers.get(cacheKey);
  if (cached) return cached;
  const offers = await checkOffers(deps.store.pool, accountId);
  deps.caches.offers.set(cacheKey, offers);
  return offers;
}
