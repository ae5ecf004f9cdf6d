import type { Deps } from "../deps";
import type { Handlers } from "../http/routes";
import { getAccountHandler, getLimitsHandler, getUsageHandler } from "./account";

/** What the account feature uses. */
export type AccountDeps = Pick<Deps, "store" | "reads" | "now">;

/** GET /v1/account, /v1/limits and /v1/usage. */
export function accountRoutes(deps: AccountDeps): Handlers {
  return { getAccount: getAccountHandler(deps), getLimits: getLimitsHandler(deps), getUsage: getUsageHandler(deps) };
}
