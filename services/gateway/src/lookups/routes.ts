import type { Handlers } from "../http/routes";
import { createLookupHandler, type CreateLookupDeps } from "./create-lookup";
import { getLookupHandler } from "./get-lookup";

/** What the lookups feature uses. */
export type LookupDeps = CreateLookupDeps;

/** POST /v1/lookup and GET /v1/lookups/{id}. */
export function lookupRoutes(deps: LookupDeps): Handlers {
  return { createLookup: createLookupHandler(deps), getLookup: getLookupHandler(deps) };
}
