import { ApiError, LIMITS } from "@svc/contract";
import {
  CHECKS,
  hasConsecutiveRun,
  hasLargeEmailFamily,
  isDocumentedTestValue,
  isTestValue,
  prepareRows,
  resolveCheck,
  type CheckCode,
  type PreparedRow,
} from "@svc/domain";
import { offersFor } from "../cache/offers";
import type { Caller, Deps } from "../context";
import { checkAvailable } from "../handlers/catalog";
import { guardDailyEmailFamilies } from "./daily-email-families";

export type RequestKind = "lookup" | "job" | "estimate";

export type IdentifierBody = { numbers?: string[]; emails?: string[]; checks: string[]; webhook_endpoint_id?: string };

export type Plan = {
  checks: CheckCode[];
  rows: PreparedRow[];
  /** Rows × checks of their input type. */
  checksTotal: number;
  webhookEndpointId: string | null;
};

/** Resolves codes and aliases; unknown codes are caught by the schema, repeats here. */
function resolveChecks(names: readonly string[]): CheckCode[] {
  const seen = new Set<CheckCode>();
  return names.map((name, i) => {
    const code = resolveCheck(name);
    if (!code) throw new ApiError("invalid_request", { param: `checks[${i}]`, message: "Unknown check code." });
    if (seen.has(code)) throw new ApiError("invalid_request", { param: `checks[${i}]`, message: "A check is requested twice (codes and aliases name the same check)." });
    seen.add(code);
    return code;
  });
}

/**
 * Everything that can refuse a lookup, estimate or job before any work or money
 * moves, in one place and one order: shape, sizes, check availability, webhook
 * target, test-value rules, enumeration guard. Per-row problems never refuse.
 */
export async function planRequest(deps: Deps, caller: Caller, body: IdentifierBody, kind: RequestKind): Promise<Plan> {
  const numbers = body.numbers ?? [];
  const emails = body.emails ?? [];
  const checks = resolveChecks(body.checks);
  const phoneChecks = checks.filter((c) => CHECKS[c].input === "number").length;
  const emailChecks = checks.length - phoneChecks;

  if (numbers.length + emails.length === 0) {
    throw new ApiError("invalid_request", { param: "numbers", message: "Send at least one number or e-mail address." });
  }
  const maxIdentifiers =
    kind === "lookup" ? LIMITS.lookupIdentifiers : caller.isSandbox ? LIMITS.sandboxJobIdentifiers : LIMITS.jobIdentifiers;
  if (numbers.length + emails.length > maxIdentifiers) {
    throw new ApiError("too_many_numbers", { message: `At most ${maxIdentifiers} numbers and e-mail addresses per request.` });
  }
  if (numbers.length > 0 && phoneChecks === 0) {
    throw new ApiError("invalid_request", { param: "checks", message: "numbers were sent without a phone check." });
  }
  if (emails.length > 0 && emailChecks === 0) {
    throw new ApiError("invalid_request", { param: "checks", message: "emails were sent without an e-mail check." });
  }
  const checksTotal = numbers.length * phoneChecks + emails.length * emailChecks;
  const maxPairs = kind === "lookup" ? LIMITS.lookupIdentifierChecks : LIMITS.jobIdentifierChecks;
  if (checksTotal > maxPairs) {
    throw new ApiError("invalid_request", { param: "checks", message: `Identifiers times applicable checks must not exceed ${maxPairs}.` });
  }

  if (kind === "lookup" && !caller.realtimeEnabled) {
    throw new ApiError("service_disabled", { param: null, message: "Real-time checks are not enabled for this account; use bulk jobs." });
  }
  const offers = await offersFor(deps, caller.accountId);
  checks.forEach((code, i) => {
    if (!checkAvailable(code, offers.get(code)?.enabledOverride)) {
      throw new ApiError("service_disabled", { param: `checks[${i}]`, message: "This check is not available for the account." });
    }
    if (kind === "lookup" && !CHECKS[code].realtime) {
      throw new ApiError("service_disabled", { param: `checks[${i}]`, message: "This check is available in bulk jobs only.", suggestion: "Send it with POST /v1/jobs." });
    }
  });

  const webhookEndpointId = await resolveWebhookTarget(deps, caller, body.webhook_endpoint_id);

  const rows = prepareRows(numbers, emails, await deps.parsePool.parse(numbers));
  const paramOf = (r: PreparedRow) => `${r.kind === "number" ? "numbers" : "emails"}[${r.index}]`;
  if (caller.isSandbox) {
    const offending = rows.find((r) => !isDocumentedTestValue(r));
    if (offending) throw new ApiError("sandbox_magic_only", { param: paramOf(offending), suggestion: "See the documented test values, or get a personal test key at /get-test-key." });
  } else if (caller.livemode) {
    const offending = rows.find((r) => isTestValue(r));
    if (offending) throw new ApiError("test_number_only", { param: paramOf(offending), suggestion: "Use a test key (svc_test_…) for test values." });
  }

  if (hasConsecutiveRun(rows)) throw new ApiError("suspected_enumeration", { param: "numbers", message: "The request contains 20 or more consecutive numbers." });
  if (hasLargeEmailFamily(rows)) {
    throw new ApiError("suspected_enumeration", { param: "emails", message: "The request contains 20 or more addresses on one domain that differ only by digits or separators." });
  }
  if (caller.livemode && kind !== "estimate") await guardDailyEmailFamilies(deps, caller, rows);

  return { checks, rows, checksTotal, webhookEndpointId };
}

/** `webhook_endpoint_id` must be a verified endpoint of the caller's account and mode; never with the sandbox key. */
async function resolveWebhookTarget(deps: Deps, caller: Caller, id: string | undefined): Promise<string | null> {
  if (id === undefined) return null;
  if (caller.isSandbox) {
    throw new ApiError("invalid_request", { param: "webhook_endpoint_id", message: "Webhooks are not available with the public sandbox key." });
  }
  const { rows } = await deps.store.pool.query(
    `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND livemode = $3 AND status = 'active' AND deleted_at IS NULL`,
    [id, caller.accountId, caller.livemode],
  );
  if (rows.length === 0) {
    throw new ApiError("invalid_request", { param: "webhook_endpoint_id", message: "webhook_endpoint_id must name a verified webhook endpoint of the key's mode." });
  }
  return id;
}
