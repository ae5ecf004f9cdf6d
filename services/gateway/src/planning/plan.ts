import { ApiError } from "@svc/contract";
import { CHECKS, type CheckCode, type InputKind, type PreparedRow } from "@svc/domain";
import { isActiveEndpoint } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { guardDailyEmailFamilies } from "./daily-email-families";
import { checkAvailable, offersFor } from "./offers";
import { countByKind, familyDigest, fromRefusal, prepareRequest, type PlanFacts, type RequestedChecks, type RequestKind } from "./prepare";

export type { RequestedChecks, RequestKind } from "./prepare";

/** What planning reads: check offers (cache, database), webhook targets, the daily family guard (Redis, clock). */
export type PlanDeps = Pick<Deps, "caches" | "store" | "config" | "redis" | "now">;

/** A planned request: what every later step (quote, reservation, storing) works from. */
export type Plan = {
  checks: CheckCode[];
  /** Rows × checks of their input type. */
  checksTotal: number;
  /** Rows per input kind. */
  counts: Record<InputKind, number>;
  webhookEndpointId: string | null;
};

/**
 * Everything that can refuse a lookup, estimate or job before any work or money
 * moves, in one order: shape and sizes, real-time switch, check availability,
 * webhook target, test-value rules, enumeration guard, the daily family guard.
 * Per-row problems never refuse. The CPU half (`prepareRequest`) ran before, here
 * for lookups, on an intake thread for bulk requests.
 */
export async function checkPlan(deps: PlanDeps, caller: Caller, facts: PlanFacts, body: Pick<RequestedChecks, "webhook_endpoint_id">, kind: RequestKind): Promise<Plan> {
  if (facts.early) throw fromRefusal(facts.early);
  if (kind === "lookup" && !caller.realtimeEnabled) {
    throw new ApiError("service_disabled", { param: null, message: "Real-time checks are not enabled for this account; use bulk jobs." });
  }
  const offers = await offersFor(deps, caller.accountId);
  facts.checks.forEach((code, i) => {
    if (!checkAvailable(code, offers.get(code)?.enabledOverride)) {
      throw new ApiError("service_disabled", { param: `checks[${i}]`, message: "This check is not available for the account." });
    }
    if (kind === "lookup" && !CHECKS[code].realtime) {
      throw new ApiError("service_disabled", { param: `checks[${i}]`, message: "This check is available in bulk jobs only.", suggestion: "Send it with POST /v1/jobs." });
    }
  });
  const webhookEndpointId = await resolveWebhookTarget(deps, caller, body.webhook_endpoint_id);
  if (facts.late) throw fromRefusal(facts.late);
  if (caller.livemode && kind !== "estimate") await guardDailyEmailFamilies(deps, caller, facts.families);
  return { checks: facts.checks, checksTotal: facts.checksTotal, counts: facts.counts, webhookEndpointId };
}

/** Both halves in this process: for lookups (at most 100 identifiers, cheap enough for the event loop). */
export async function planRequest(deps: PlanDeps, caller: Caller, body: RequestedChecks, kind: RequestKind): Promise<Plan & { rows: PreparedRow[] }> {
  const prepared = prepareRequest(body, caller, kind, familyDigest(deps.config.CACHE_HASH_SECRET));
  const plan = await checkPlan(deps, caller, { ...prepared, counts: countByKind(prepared.rows) }, body, kind);
  return { ...plan, rows: prepared.rows };
}

/** `webhook_endpoint_id` must be a verified endpoint of the caller's account and mode; never with the sandbox key. */
async function resolveWebhookTarget(deps: Pick<Deps, "store">, caller: Caller, id: string | undefined): Promise<string | null> {
  if (id === undefined) return null;
  if (caller.isSandbox) {
    throw new ApiError("invalid_request", { param: "webhook_endpoint_id", message: "Webhooks are not available with the public sandbox key." });
  }
  if (!(await isActiveEndpoint(deps.store.pool, { accountId: caller.accountId, livemode: caller.livemode }, id))) {
    throw new ApiError("invalid_request", { param: "webhook_endpoint_id", message: "webhook_endpoint_id must name a verified webhook endpoint of the key's mode." });
  }
  return id;
}
