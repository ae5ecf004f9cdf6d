import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { APIError, formatAmount, parseAmount } from "@svc/sdk";
import { CONFIRM_NUMBERS_ABOVE, type McpConfig } from "./config.js";
import type { ConfirmationBook, Ticket, TokenHold, TokenProblem } from "./confirmation-token.js";
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

/** The two arguments a confirmed call carries; everything else is what gets confirmed. */
export interface ConfirmationFields {
  confirm_max_cost?: string;
  confirmation_token?: string;
}

/** A confirmation that checked out: the amount the user approved and the token that binds it to this call. */
export interface Approval {
  limitMicros: bigint;
  ticket: Ticket;
}

export type Decision =
  /**
   * Go ahead, sending `maxCost` as the request's `max_cost`: the API refuses anything
   * dearer. A confirmed call holds its token (`hold`): send through `sendSettling`.
   */
  | { proceed: true; maxCost: string; confirmed: boolean; hold: TokenHold | null }
  | { proceed: false; result: CallToolResult };

/** The arguments a confirmation is bound to: all of them except the confirmation fields. */
export function boundArguments<T extends ConfirmationFields>(args: T): Omit<T, keyof ConfirmationFields> {
  const { confirm_max_cost: _amount, confirmation_token: _token, ...bound } = args;
  return bound;
}

/**
 * The confirmation rule, step 1, before anything is sent: reads `confirm_max_cost`
 * and `confirmation_token`.
 *
 * - Neither: no approval; step 2 decides whether one is needed.
 * - `confirm_max_cost` is only accepted with the token of the `confirmation_required`
 *   answer it approves, and the token only with an amount (the amount is what the
 *   person approves; the token says which call they approved it for). The token must
 *   be genuine, unexpired, unused and issued for this tool with exactly these
 *   arguments; otherwise `confirmation_invalid` with a `reason`.
 * - An amount below the quote the token carries is `cost_limit_exceeded`: the user
 *   approved less than the call may cost. The token stays valid for the right amount.
 * - A token already sent once without a definitive answer (see `sendSettling`) fits
 *   only the same amount again (`amount_changed`): the repeat must be the same request.
 *
 * Nothing is taken here: a refusal leaves the token as it was.
 */
export function readApproval(tool: string, args: ConfirmationFields & Record<string, unknown>, book: ConfirmationBook): { approval: Approval | null } | { refused: CallToolResult } {
  const amount = args.confirm_max_cost;
  const token = args.confirmation_token;
  if (amount === undefined && token === undefined) return { approval: null };
  let limit: bigint | null = null;
  if (amount !== undefined) {
    limit = parseAmount(amount.trim());
    if (limit === null) {
      return { refused: fail({ code: "invalid_argument", param: "confirm_max_cost", message: 'confirm_max_cost must be an amount in USD with at most 6 decimals, e.g. "1.20".', retryable: false }) };
    }
  }
  if (token === undefined) return { refused: confirmationInvalid(tool, "missing_token", book) };
  if (limit === null) return { refused: confirmationInvalid(tool, "missing_amount", book) };
  const checked = book.check(tool, boundArguments(args), token);
  if (!checked.ok) return { refused: confirmationInvalid(tool, checked.problem, book) };
  const { ticket } = checked;
  const quote = formatAmount(ticket.quoteMicros);
  if (limit < ticket.quoteMicros) {
    return {
      refused: costLimitExceeded(
        ticket.quoteMicros,
        limit,
        `Refused, nothing sent or charged: confirm_max_cost (${formatAmount(limit)} USD) is below the ${quote} USD this call was quoted. ` +
          `Only the user can approve more: ask them to approve up to ${quote} USD, then repeat the call with confirm_max_cost: "${quote}" and the same confirmation_token.`,
      ),
    };
  }
  if (ticket.sentWithMicros !== null && ticket.sentWithMicros !== limit) return { refused: confirmationInvalid(tool, "amount_changed", book, ticket.sentWithMicros) };
  return { approval: { limitMicros: limit, ticket } };
}

/**
 * The confirmation rule, step 2, once the maximum possible cost is known:
 *
 * - Without an approval, a call whose maximum possible cost is above the threshold
 *   (SVC_MCP_CONFIRM_ABOVE, default 1.00 USD), or that covers more than 100 numbers,
 *   is not sent: the answer is `confirmation_required` with the amount, the counts and
 *   a token bound to this call, good for one call. Otherwise it is sent with
 *   `max_cost` = the threshold, so the API itself refuses it should the cost have
 *   risen past it.
 * - With an approval, the call goes ahead only if the cost (computed again, now) is at
 *   most the approved amount, and is sent with `max_cost` = that amount, so the API
 *   refuses anything dearer (`cost_limit_exceeded`) at the moment it reserves. The
 *   token is held here, synchronously, right before sending: of two calls racing with
 *   one token only the first goes ahead (the other: `in_use`). `sendSettling` spends
 *   or releases it by the outcome.
 *
 * Test keys cost nothing (their prices are 0) but the 100-numbers rule applies.
 */
export function decide(tool: string, args: Record<string, unknown>, a: Assessment, approval: Approval | null, book: ConfirmationBook, config: McpConfig): Decision {
  if (approval) {
    const limit = approval.limitMicros;
    if (a.maxCostMicros > limit) {
      return {
        proceed: false,
        result: costLimitExceeded(
          a.maxCostMicros,
          limit,
          `Refused: the maximum possible cost is now ${formatAmount(a.maxCostMicros)} USD, higher than confirm_max_cost (${formatAmount(limit)} USD). Nothing was sent or charged. Call ${tool} again without confirm_max_cost and confirmation_token for a new quote, and confirm that amount with the user.`,
        ),
      };
    }
    const held = book.hold(approval.ticket, limit);
    if (!held.ok) return { proceed: false, result: confirmationInvalid(tool, held.problem, book, held.sentWithMicros) };
    return { proceed: true, maxCost: formatAmount(limit), confirmed: true, hold: held.hold };
  }
  const reasons = confirmationReasons(a, config);
  if (reasons.length === 0) return { proceed: true, maxCost: formatAmount(config.confirmAboveMicros), confirmed: false, hold: null };
  return { proceed: false, result: confirmationRequired(tool, args, a, reasons, book, config) };
}

/**
 * Sends what a decision let through and settles the token it holds by the outcome.
 * Spent once the call has a definitive one: an answer (success, or an API error not
 * marked retryable), after which the API will not do it again or has done it for
 * good. Released otherwise (a retryable API error, a lost connection, a timeout, a
 * cancelled call): the API may or may not have acted, so the identical repeat (same
 * arguments, same amount, same token, before it expires) must go through, and it
 * carries the same Idempotency-Key (create_job's derived from the request, lookup's
 * from the token: `confirmedLookupKey`), so the API answers it with the first call's
 * result instead of doing it twice.
 */
export async function sendSettling<T>(hold: TokenHold | null, send: () => Promise<T>): Promise<T> {
  if (hold === null) return send();
  let definitive = false;
  try {
    const value = await send();
    definitive = true;
    return value;
  } catch (err) {
    definitive = isDefinitiveFailure(err);
    throw err;
  } finally {
    if (definitive) hold.spend();
    else hold.release();
  }
}

/** An API answer refusing the call for good: sending it again would be refused again (or replayed). */
export function isDefinitiveFailure(err: unknown): boolean {
  return err instanceof APIError && !err.retryable;
}

/** `cost_limit_exceeded` decided here, before anything is sent: the cost the call may reach against the amount approved. */
function costLimitExceeded(costMicros: bigint, limitMicros: bigint, message: string): CallToolResult {
  return fail({
    code: "cost_limit_exceeded",
    status: null,
    retryable: false,
    param: "confirm_max_cost",
    message,
    max_cost: formatAmount(costMicros),
    max_cost_sent: formatAmount(limitMicros),
  });
}

/** Why a call without an approval would need one (empty: it would not). */
export function confirmationReasons(a: Assessment, config: McpConfig): string[] {
  const reasons: string[] = [];
  if (a.maxCostMicros > config.confirmAboveMicros) reasons.push("max_cost_above_threshold");
  if (a.numbers > CONFIRM_NUMBERS_ABOVE) reasons.push("more_than_100_numbers");
  return reasons;
}

const minutes = (book: ConfirmationBook): string => {
  const s = Math.round(book.ttlMs / 1000);
  return s % 60 === 0 ? `${s / 60} minute${s === 60 ? "" : "s"}` : `${s} second${s === 1 ? "" : "s"}`;
};

function confirmationRequired(tool: string, args: Record<string, unknown>, a: Assessment, reasons: string[], book: ConfirmationBook, config: McpConfig): CallToolResult {
  const cost = formatAmount(a.maxCostMicros);
  const threshold = formatAmount(config.confirmAboveMicros);
  const identifiers = a.numbers + a.emails;
  const { token, expiresAt } = book.issue(tool, boundArguments(args), a.maxCostMicros);
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
      `then call ${tool} again with exactly the same arguments plus confirm_max_cost: "${cost}" and the confirmation_token from confirm.arguments, within ${minutes(book)}. The token is good for that one call only (should it fail with retryable: true, repeat it identically with the same token).`,
    reasons,
    max_cost: cost,
    currency: "USD",
    identifiers,
    numbers: a.numbers,
    emails: a.emails,
    checks_total: a.checksTotal,
    livemode: a.livemode,
    threshold,
    confirm: {
      arguments: { confirm_max_cost: cost, confirmation_token: token },
      expires_at: new Date(expiresAt).toISOString(),
      single_use: true,
      how: `Once the user approves up to ${cost} USD, repeat the same ${tool} call, with the same arguments, adding these two.`,
    },
  });
}

const PROBLEMS: Record<TokenProblem | "missing_token" | "missing_amount", { param: string; says: (tool: string, book: ConfirmationBook, sentWith: string | null) => string }> = {
  missing_token: {
    param: "confirmation_token",
    says: (tool) =>
      `confirm_max_cost is only accepted together with the confirmation_token of the confirmation_required answer the user approved, and this call has none. Call ${tool} without confirm_max_cost: it either goes ahead (calls under the threshold need no confirmation) or answers confirmation_required with the amount and a token.`,
  },
  missing_amount: {
    param: "confirm_max_cost",
    says: () => "confirmation_token needs confirm_max_cost beside it: the amount the user approved (the one confirmation_required quoted).",
  },
  invalid_token: {
    param: "confirmation_token",
    says: (tool) => `confirmation_token is not one this server issued (altered, or issued before the server restarted). Call ${tool} without the confirmation fields for a fresh quote and token, and confirm that amount with the user.`,
  },
  expired: {
    param: "confirmation_token",
    says: (tool, book) => `the confirmation expired (a token is valid for ${minutes(book)}). Call ${tool} without the confirmation fields for a fresh quote and token, and confirm that amount with the user.`,
  },
  arguments_changed: {
    param: "confirmation_token",
    says: (tool) =>
      `the confirmation_token was issued for a different call (another tool, or other arguments: a different or longer list, other checks, another idempotency_key…). A confirmation covers exactly the call that was quoted. Call ${tool} with these arguments and without the confirmation fields to get their own quote, and confirm that amount with the user.`,
  },
  already_used: {
    param: "confirmation_token",
    says: (tool) => `this confirmation_token was already used: a confirmation covers one call. To do it again, call ${tool} without the confirmation fields for a new quote and token, and confirm that amount with the user.`,
  },
  in_use: {
    param: "confirmation_token",
    says: () => "another call with this confirmation_token is running now: its answer says whether it was done. Should that answer be an error with retryable: true, repeat the call then, identically.",
  },
  amount_changed: {
    param: "confirm_max_cost",
    says: (_tool, _book, sentWith) =>
      `this confirmation_token already went out once with confirm_max_cost "${sentWith}" and that call's outcome is unknown: it may have been done. Repeat it with exactly the same arguments and confirm_max_cost: "${sentWith}", so the API answers it with the first call's result instead of doing it twice.`,
  },
};

/** `confirmation_invalid`: the confirmation fields do not confirm this call; nothing was sent. */
function confirmationInvalid(tool: string, reason: keyof typeof PROBLEMS, book: ConfirmationBook, sentWithMicros: bigint | null = null): CallToolResult {
  const p = PROBLEMS[reason];
  const sentWith = sentWithMicros === null ? null : formatAmount(sentWithMicros);
  return fail({ code: "confirmation_invalid", status: null, retryable: false, param: p.param, reason, message: `Refused, nothing sent or charged: ${p.says(tool, book, sentWith)}` });
}
