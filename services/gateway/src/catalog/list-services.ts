import { CHECK_CODES, CHECKS, money } from "@svc/domain";
import type { Caller } from "../caller";
import type { Handler } from "../http/routes";
import { checkAvailable, offersFor, type OfferDeps } from "../planning/offers";

/**
 * GET /v1/services: without a key the public catalog at list prices; with a key the
 * checks that account may use at its own prices. `number.hlr` stays hidden until
 * switched on for the account.
 */
export function listServicesHandler(deps: OfferDeps): Handler {
  return async ({ caller }: { caller: Caller | undefined }) => {
    const offers = await offersFor(deps, caller?.accountId ?? null);
    const data = CHECK_CODES.filter((code) => checkAvailable(code, caller ? offers.get(code)?.enabledOverride : null)).map((code) => {
      const def = CHECKS[code];
      const offer = offers.get(code);
      return {
        code,
        aliases: [...def.aliases],
        input: def.input,
        // With a key: whether this account may use it in real time (its switch can be off).
        realtime: def.realtime && (caller ? caller.realtimeEnabled : true),
        bulk: true,
        description: def.description,
        countries: def.countries ? [...def.countries] : null,
        attributes: def.attributes.map((a) => ({ ...a })),
        prices: { live: money(offer?.livePriceMicros ?? 0n), test: money(offer?.testPriceMicros ?? 0n) },
      };
    });
    return { status: 200, body: { object: "list", account_specific: Boolean(caller), data } };
  };
}
