import { CHECK_CODES } from "@svc/domain";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { checkAvailable, offersFor, type OfferDeps } from "../planning/offers";
import { presentService } from "./present";

/**
 * GET /v1/services: without a key the public catalog at list prices; with a key the
 * checks that account may use at its own prices. `number.hlr` stays hidden until
 * switched on for the account.
 */
export function listServicesRoute(deps: OfferDeps): RouteHandler {
  return defineRoute("listServices")(async ({ caller }) => {
    const offers = await offersFor(deps, caller?.accountId ?? null);
    const data = CHECK_CODES.filter((code) => checkAvailable(code, caller ? offers.get(code)?.enabledOverride : null)).map((code) =>
      // With a key: whether this account may use it in real time (its switch can be off).
      presentService(code, offers.get(code), caller ? caller.realtimeEnabled : true),
    );
    return { status: 200, body: { object: "list", account_specific: Boolean(caller), data } };
  });
}
