import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { APIError, SvcError } from "@svc/sdk";

/**
 * Tool results. Success: `structuredContent` (checked against the tool's output
 * schema) and the same JSON as text for clients that read only text. Failure:
 * `isError: true` with the text `{ error: { code, message, … } }`, so the agent reads what
 * went wrong and what to do instead of getting a transport error.
 */

export type ToolErrorBody = {
  code: string;
  message: string;
  status?: number | null;
  retryable?: boolean;
  param?: string | null;
  suggestion?: string;
  request_id?: string | null;
  doc_url?: string;
  retry_after_seconds?: number;
  [extra: string]: unknown;
};

export function ok(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/**
 * Errors travel as text only: clients (the official one included) check any
 * `structuredContent` against the tool's output schema, which describes success.
 * The text is one JSON object, `{"error": {...}}`, for the agent and for programs.
 */
export function fail(error: ToolErrorBody): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify({ error }) }], isError: true };
}

/** The `error` object of a failed tool result (for logging). */
export function errorOf(result: CallToolResult): ToolErrorBody | undefined {
  if (!result.isError) return undefined;
  const first = result.content[0];
  if (!first || first.type !== "text") return undefined;
  try {
    return (JSON.parse(first.text) as { error?: ToolErrorBody }).error;
  } catch {
    return undefined;
  }
}

/** Scope each tool needs, named in `insufficient_scope` answers. */
export const TOOL_SCOPES: Record<string, string> = {
  lookup: "lookup:write",
  get_lookup: "lookup:write",
  estimate_job: "jobs:write",
  create_job: "jobs:write",
  get_job: "jobs:read",
  get_job_results: "jobs:read",
  get_account: "account:read",
};

const PAID_TOOLS = "lookup, create_job";
const FREE_TOOLS = "list_services, estimate_job, get_job, get_job_results, get_lookup, get_account";

function nextUtcMidnight(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/**
 * An SDK error as a tool error: the API's code, message, status, param, suggestion
 * and request id, with a sentence for the agent on the codes that decide what it
 * should do next (caps, budgets, scopes, keys).
 */
export function errorResult(err: unknown, tool: string, context: { maxCostSent?: string | null; confirmationKept?: boolean } = {}): CallToolResult {
  const result = errorBody(err, tool, context);
  if (context.confirmationKept) {
    // The call's confirmation token was released, not spent (confirm.ts, sendSettling): say how to use it.
    result.message += ` The confirmation_token is still good for this call: repeat it identically (same arguments, same confirm_max_cost, same token) before the token expires; if the first attempt was done after all, the API answers with its result instead of doing it twice.`;
    result.confirmation_token_kept = true;
  }
  return fail(result);
}

function errorBody(err: unknown, tool: string, context: { maxCostSent?: string | null }): ToolErrorBody {
  if (!(err instanceof SvcError)) {
    return { code: "internal_error", message: "The MCP server failed unexpectedly; nothing more is known. Try again; if it keeps failing, tell the operator.", retryable: true };
  }
  const body: ToolErrorBody = { code: err.code, message: err.message, status: err.status, retryable: err.retryable, param: err.param, request_id: err.requestId };
  if (err instanceof APIError) {
    if (err.suggestion) body.suggestion = err.suggestion;
    if (err.docUrl) body.doc_url = err.docUrl;
    if (err.retryAfterMs !== null) body.retry_after_seconds = Math.ceil(err.retryAfterMs / 1000);
    // A replayed error body keeps the first request's id; prefer it (support finds that one).
    if (typeof err.body?.request_id === "string") body.request_id = err.body.request_id;
  }
  switch (err.code) {
    case "spend_cap_reached": {
      const resumes = err instanceof APIError && err.retryAfterMs !== null ? new Date(Date.now() + err.retryAfterMs) : nextUtcMidnight();
      body.message = `This key's daily spend cap is reached: its spending is over for today. The paying tools (${PAID_TOOLS}) are refused until 00:00 UTC; do not retry them today. The free tools (${FREE_TOOLS}) still work. Tell the user; only the operator can raise the cap.`;
      body.spending_resumes_at = resumes.toISOString();
      body.retryable = false;
      break;
    }
    case "daily_cap_reached":
      body.message = `The account's daily cap (identifiers or spend) is reached: ${PAID_TOOLS} are refused until 00:00 UTC; the free tools still work. ${err.message}`;
      body.spending_resumes_at = nextUtcMidnight().toISOString();
      break;
    case "cost_limit_exceeded":
      body.message =
        `Refused: the maximum possible cost is higher than the ${context.maxCostSent ? `${context.maxCostSent} USD` : "amount"} this call allowed. Nothing was done or charged. ` +
        `Call ${tool} again without confirm_max_cost and confirmation_token to get the current amount and a new token, and confirm that amount with the user. (${err.message})`;
      if (context.maxCostSent) body.max_cost_sent = context.maxCostSent;
      break;
    case "insufficient_balance":
      body.message = `The account's balance cannot cover the maximum possible cost of this call; nothing was charged. Send fewer identifiers or checks, or ask the operator to top up. (${err.message})`;
      break;
    case "insufficient_scope":
      body.message = `This key may not use ${tool}: it lacks the scope ${TOOL_SCOPES[tool] ?? "this tool needs"}. Ask the operator for an agent key with that scope.`;
      body.scope_needed = TOOL_SCOPES[tool] ?? null;
      break;
    case "missing_api_key":
      body.message = "The MCP server has no API key: the operator must set SVC_API_KEY in the server's environment (the env block of the MCP client configuration).";
      break;
    case "unauthorized":
      body.message = "The API refused the server's key (unknown, revoked, expired, or used outside its IP allowlist). The operator must issue a new key.";
      break;
    default:
      break;
  }
  return body;
}
