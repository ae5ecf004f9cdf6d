import type { Deps } from "../deps";
import type { RouteHandler } from "../http/define-route";
import { getAccountRoute, getLimitsRoute, getUsageRoute } from "./account";

/** What the account feature uses. */
export type AccountDeps = Pick<Deps, "store" | "reads" | "now">;

/** GET /v1/account, /v1/limits and /v1/usage. */
export function accountRoutes(deps: AccountDeps): RouteHandler[] {
  return [getAccountRoute(deps), getLimitsRoute(deps), getUsageRoute(deps)];
}
