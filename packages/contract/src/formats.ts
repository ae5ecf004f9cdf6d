/**
 * The two formats a client writes by hand: an amount of money (`max_cost.amount`) and
 * an API key. Defined once in @svc/domain, where the gateway reads them; part of the
 * contract so that the SDK, which bundles the contract, gives its users, the CLI and
 * the MCP server the very same definitions (and the money helpers built on the first).
 */
export { AMOUNT_PATTERN, MICROS_PER_UNIT, formatAmount, parseAmount } from "@svc/domain";
export { API_KEY_MODES, API_KEY_PATTERN, API_KEY_PREFIX_PATTERN, API_KEY_PREFIX_SOURCE } from "@svc/domain";
