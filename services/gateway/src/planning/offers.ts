import { CHECKS, type CheckCode } from "@svc/domain";
import { checkOffers, type CheckOffer } from "@svc/store";
import type { Deps } from "../deps";

export type OfferDeps = Pick<Deps, "caches" | "store">;

/** Prices and switches for an account (or the public catalog), from the cache when fresh. */
export async function offersFor(deps: OfferDeps, accountId: string | null): Promise<Map<CheckCode, CheckOffer>> {
  const cacheKey = accountId ?? "";
  const cached = deps.caches.offers.get(cacheKey);
  if (cached) return cached;
  const offers = await checkOffers(deps.store.pool, accountId);
  deps.caches.offers.set(cacheKey, offers);
  return offers;
}

/** Whether an account may use a check: coming-soon checks need switching on; any check can be switched off. */
export function checkAvailable(code: CheckCode, enabledOverride: boolean | null | undefined): boolean {
  if (enabledOverride === false) return false;
  return CHECKS[code].availability === "active" || enabledOverride === true;
}
