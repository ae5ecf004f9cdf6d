import type { NewLookup, StoredRow } from "@svc/store";
import type { Request } from "express";
import type { Caller } from "../caller";
import type { Plan } from "../planning/plan";

/**
 * A lookup to store, live or test: the caller's account, key and retention, the plan's
 * checks, and the request's id. Pending until every row is answered (`pending`), when
 * completion is stamped `now`.
 */
export function lookupToStore(
  req: Request,
  caller: Caller,
  plan: Plan,
  o: { id: string; livemode: boolean; now: Date; pending: boolean; completesAt: Date | null; rows: StoredRow[]; usage?: NewLookup["usage"] },
): NewLookup {
  return {
    id: o.id,
    accountId: caller.accountId,
    apiKeyId: caller.keyId,
    livemode: o.livemode,
    status: o.pending ? "pending" : "completed",
    checks: plan.checks,
    checksTotal: plan.checksTotal,
    webhookEndpointId: plan.webhookEndpointId,
    requestId: req.id,
    createdAt: o.now,
    completedAt: o.pending ? null : o.now,
    completesAt: o.completesAt,
    expiresAt: new Date(o.now.getTime() + caller.retentionDays * 86_400_000),
    rows: o.rows,
    ...(o.usage ? { usage: o.usage } : {}),
  };
}
