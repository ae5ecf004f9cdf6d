import { CHECK_CODES, CHECKS, money, type CheckCode } from "@svc/domain";
import { offersFor } from "../cache/offers";
import type { Caller, Deps } from "../context";
import type { Handler } from "../http/routes";

/** Whether an account may use a check: coming-soon checks need switching on; any check can be switched off. */
export function checkAvailable(code: CheckCode, enabledOverride: boolean | null | undefined): boolean {
  if (enabledOverride === false) return false;
  return CHECKS[code].availability === "active" || enabledOverride === true;
}

/**
 * GET /v1/services: without a key the public catalog at list prices; with a key the
 * checks that account may use at its own prices. `number.hlr` stays hidden until
 * switched on for the account.
 */
export function listServicesHandler(deps: Deps): Handler {
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
