import { ApiError, LIMITS, type LookupRequest, type Static } from "@svc/contract";
import { answerTestRows, newId, type PreparedRow } from "@svc/domain";
import { jobIdOf } from "@svc/queues";
import { insertLookup, lookupRecordOf, type NewLookup } from "@svc/store";
import type { Request, Response } from "express";
import type { Caller } from "../caller";
import type { OfferDeps } from "../planning/offers";
import type { Plan } from "../planning/plan";
import { quote } from "../pricing/quote";
import { storedRow } from "../storing/result-rows";
import { storeTestResource } from "../storing/test-resource";
import { testUsage } from "../storing/test-usage";
import { answerAfterWait, type AnswerDeps, type LookupReply } from "./answer-after-wait";
import { lookupToStore } from "./new-lookup";
import { presentLookup } from "./present";
import type { GroupCommit } from "./test-batch";

/** Test lookups without an Idempotency-Key are group-committed by this process's writer (test-batch.ts). */
export type TestLookupDeps = AnswerDeps & OfferDeps & { testLookups: GroupCommit<NewLookup> };

/** What creating a lookup reads of its request besides the identifiers: how long to wait, the cost ceiling. */
export type LookupOptions = Pick<Static<typeof LookupRequest>, "wait" | "max_cost">;
/** Lookups are planned in this process, so their prepared rows are at hand. */
export type LookupPlan = Plan & { rows: PreparedRow[] };

/**
 * Test mode: answers come from the documented table or a deterministic hash.
 * Pending test values are stored `pending` with their completion time; the
 * check-worker completes them on schedule and any read completes them when due.
 */
export async function createTestLookup(deps: TestLookupDeps, req: Request, res: Response, caller: Caller, plan: LookupPlan, body: LookupOptions): Promise<LookupReply> {
  // Test mode is free, but max_cost is validated as in live mode.
  if (body.max_cost !== undefined) await quote(deps, caller, plan, body.max_cost);
  const now = deps.now();
  const answered = answerTestRows(plan.rows, plan.checks, now, false);
  if (answered.unavailable) {
    throw new ApiError("temporarily_unavailable", { message: "Every route for a requested check is down. Nothing was charged.", retryAfterSeconds: 5 });
  }
  const id = newId("lookup");
  const pending = answered.pendingSeconds > 0;
  const stored = lookupToStore(req, caller, plan, {
    id,
    livemode: false,
    now,
    pending,
    completesAt: pending ? new Date(now.getTime() + answered.pendingSeconds * 1000) : null,
    rows: answered.rows.map(storedRow),
    // Usage counts final answers; a pending test value's are known already (deterministic).
    usage: testUsage(plan.checks, pending ? answerTestRows(plan.rows, plan.checks, now, true).rows : answered.rows, now),
  });
  await storeTestResource(deps, req.idempotencyClaim, id, (client) => insertLookup(client, stored), () => deps.testLookups.add(stored));
  if (!pending) return { status: 200, body: presentLookup(lookupRecordOf(stored), answered.rows, deps.config.publicBaseUrl) };

  // Completion on schedule even if nobody polls (lookup.completed must still go out).
  await deps.producer
    .enqueue("lookup.complete-test", { lookupId: id }, { jobId: jobIdOf("lookup.complete-test", { lookupId: id }), delayMs: answered.pendingSeconds * 1000 })
    .catch((err) => req.log.warn({ err }, "could not schedule test lookup completion; reads and the sweeper will complete it"));
  const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
  return answerAfterWait(deps, res, caller, id, waitSeconds * 1000, answered.rows.map((r) => r.input));
}

