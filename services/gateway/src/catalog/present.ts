import type { ServiceSchema, Static } from "@svc/contract";
import { CHECKS, money, type CheckCode } from "@svc/domain";
import type { CheckOffer } from "@svc/store";

export type Service = Static<typeof ServiceSchema>;

/**
 * The API shape of one check at the prices of `offer` (list prices without one).
 * `realtime` is the check's own switch and, with a key, the account's too.
 */
export function presentService(code: CheckCode, offer: CheckOffer | undefined, realtimeEnabled: boolean): Service {
  const def = CHECKS[code];
  return {
    code,
    aliases: [...def.aliases],
    input: def.input,
    realtime: def.realtime && realtimeEnabled,
    bulk: true,
    description: def.description,
    countries: def.countries ? [...def.countries] : null,
    attributes: def.attributes.map((a) => ({ ...a })),
    prices: { live: money(offer?.livePriceMicros ?? 0n), test: money(offer?.testPriceMicros ?? 0n) },
  };
}
