import type { Handlers } from "../http/routes";
import type { OfferDeps } from "../planning/offers";
import { listServicesHandler } from "./list-services";

/** GET /v1/services. */
export function catalogRoutes(deps: OfferDeps): Handlers {
  return { listServices: listServicesHandler(deps) };
}
