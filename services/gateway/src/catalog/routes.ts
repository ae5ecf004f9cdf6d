import type { RouteHandler } from "../http/define-route";
import type { OfferDeps } from "../planning/offers";
import { listServicesRoute } from "./list-services";

/** GET /v1/services. */
export function catalogRoutes(deps: OfferDeps): RouteHandler[] {
  return [listServicesRoute(deps)];
}
