import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CONFIRM_NUMBERS_ABOVE, type McpConfig } from "./config.js";
import { formatMicros, toMicros } from "./money.js";
import { fail } from "./results.js";

/** What a paying call would cover and may cost at most, computed before anything is sent. */
export interface Assessment {
  /** The maximum possible cost: what the API would reserve (test keys: 0). */
  maxCostMicros: bigint;
  numbers: number;
  emails: number;
  /** Identifiers × checks of their input type. */
  checksTotal: number;
  livemode: boolean;
}

export type Decision =
  /** Go ahead, sending `maxCost` as the request's `max_cost`: the API refuses anything dearer. */
  | { proceed: true; maxCost: string; confirmed: boolean }
  | { proceed: false; result: CallToolResult };

/**
 * The confirmation rule, in one place:
 *
 * - Without `confirm_max_cost`, a call whose maximum possible cost is above the
 *   threshold (SVC_MCP_CONFIRM_ABOVE, default 1.00 USD), or that covers more than
 *   100 numbers, is not sent: the answer is `confirmation_required` with the amount,
 *   the counts and how to confirm. Otherwise it is sent with `max_cost` = the
 *   threshold, so the API itself refuses it should the cost have risen past it.
 * - With `confirm_max_cost`, the call goes ahead only if the cost (computed again,
 *   now) is at most that amount, and is sent with `max_cost` = that amount, so the
 *   API refuses anything dearer (`cost_limit_exceeded`) at the moment it reserves.
 *
 * Test keys cost nothing (their prices are 0) but the 100-numbers rule applies.
 */
export function decide(tool: string, a: Assessment, confirmMaxCost: string | number | undefined, config: McpConfig): Decision {
  if (confirmMaxCost !== undefined) {
    const limit = toMicros(confirmMaxCost);
    if (limit === null) {
      return { proceed: false, result: fail({ code: "invalid_argument", param: "confirm_max_cost", message: 'confirm_max_cost must be an amount in USD with at most 6 decimals, e.g. "1.20".', retryable: false }) };
    }
    if (a.maxCostMicros > limit) {
      return {
        proceed: false,
        result: fail({
          code: "cost_limit_exceeded",
          status: null,
          retryable: false,
          param: "confirm_max_cost",
          message: `Refused: the maximum possible cost is now ${formatMicros(a.maxCostMicros)} USD, higher than confirm_max_cost (${formatMicros(limit)} USD). Nothing was sent or charged. Confirm the new amount with the user and call ${tool} again with confirm_max_cost: "${formatMicros(a.maxCostMicros)}".`,
          max_cost: formatMicros(a.maxCostMicros),
          max_cost_sent: formatMicros(limit),
        }),
      };
    }
    return { proceed: true, maxCost: formatMicros(limit), confirmed: true };
  }
  const reasons = confirmationReasons(a, config);
  if (reasons.length === 0) return { proceed: true, maxCost: formatMicros(config.confirmAboveMicros), confirmed: false };
  return { proceed: false, result: confirmationRequired(tool, a, reasons, config) };
}

/** Why a call without `confirm_max_cost` would need one (empty: it would not). */
export function confirmationReasons(a: Assessment, config: McpConfig): string[] {
  const reasons: string[] = [];
  if (a.maxCostMicros > config.confirmAboveMicros) reasons.push("max_cost_above_threshold");
  if (a.numbers > CONFIRM_NUMBERS_ABOVE) reasons.push("more_than_100_numbers");
  return reasons;
}

function confirmationRequired(tool: string, a: Assessment, reasons: string[], config: McpConfig): CallToolResult {
  const cost = formatMicros(a.maxCostMicros);
  const threshold = formatMicros(config.confirmAboveMicros);
  const identifiers = a.numbers + a.emails;
  const why = [
    reasons.includes("max_cost_above_threshold") ? `its maximum possible cost, ${cost} USD, is above the ${threshold} USD confirmation threshold` : null,
    reasons.includes("more_than_100_numbers") ? `it covers ${a.numbers} phone numbers (more than ${CONFIRM_NUMBERS_ABOVE})` : null,
  ]
    .filter(Boolean)
    .join(" and ");
  const free = a.livemode ? "" : " (Test key: nothing is charged.)";
  return fail({
    code: "confirmation_required",
    status: null,
    retryable: false,
    message:
      `Not done, nothing charged: ${tool} needs confirmation because ${why}.${free} ` +
      `Ask the user to approve up to ${cost} USD for ${identifiers} identifiers (${a.numbers} numbers, ${a.emails} e-mails), ` +
      `then call ${tool} again with the same arguments plus confirm_max_cost: "${cost}".`,
    reasons,
    max_cost: cost,
    currency: "USD",
    identifiers,
    numbers: a.numbers,
    emails: a.emails,
    checks_total: a.checksTotal,
    livemode: a.livemode,
    threshold,
    confirm: { argument: "confirm_max_cost", value: cost, how: `Repeat the same ${tool} call with "confirm_max_cost": "${cost}" once the user approves.` },
  });
}
