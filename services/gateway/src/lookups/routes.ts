import type { RouteHandler } from "../http/define-route";
import { createLookupRoute, type CreateLookupDeps } from "./create-lookup";
import { getLookupRoute } from "./get-lookup";

/** What the lookups feature uses. */
export type LookupDeps = CreateLookupDeps;

/** POST /v1/lookup and GET /v1/lookups/{id}. */
export function lookupRoutes(deps: LookupDeps): RouteHandler[] {
  return [createLookupRoute(deps), getLookupRoute(deps)];
}
