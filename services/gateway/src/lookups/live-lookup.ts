import { LIMITS } from "@svc/contract";
import { requestSettlement } from "@svc/flows";
import { initialLiveRows, newId } from "@svc/domain";
import { jobIdOf } from "@svc/queues";
import { lookupRecordOf } from "@svc/store";
import type { Request, Response } from "express";
import type { Caller } from "../caller";
import { refuseIfChecksDown } from "../planning/checks-down";
import type { OfferDeps } from "../planning/offers";
import { quote } from "../pricing/quote";
import { reserveAndStore, type ReserveDeps } from "../pricing/reserve";
import { storedRow } from "../storing/result-rows";
import { answerAfterWait, waitFromNow, type AnswerDeps, type LookupReply } from "./answer-after-wait";
import { lookupToStore } from "./new-lookup";
import { presentLookup } from "./present";
import type { LookupOptions, LookupPlan } from "./test-lookup";

/** How long a live lookup's money may stay reserved before the sweeper closes it. */
const LIVE_RESERVATION_TTL_MS = 3600 * 1000;

export type LiveLookupDeps = AnswerDeps & OfferDeps & ReserveDeps;

/**
 * Live mode: refuse up front if a check has no working route, reserve the maximum
 * possible cost together with storing the lookup, hand it to the check-worker and
 * wait up to `wait` seconds for the answers.
 */
export async function createLiveLookup(deps: LiveLookupDeps, req: Request, res: Response, caller: Caller, plan: LookupPlan, body: LookupOptions): Promise<LookupReply> {
  await refuseIfChecksDown(deps, plan.checks);
  const q = await quote(deps, caller, plan, body.max_cost);
  const now = deps.now();
  const id = newId("lookup");
  const rows = initialLiveRows(plan.rows, plan.checks);
  const pending = rows.some((r) => r.checks.some((c) => c.status === "pending"));
  const lookup = lookupToStore(req, caller, plan, { id, livemode: true, now, pending, completesAt: null, rows: rows.map(storedRow) });
  const reservation = { lookupId: id, expiresAt: new Date(now.getTime() + LIVE_RESERVATION_TTL_MS) };
  const reservationId = await reserveAndStore(deps, caller, q, plan.rows.length, reservation, { lookup }, req.idempotencyClaim);
  const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
  // Listening for the completion notice before the work is handed on: no read is needed to catch a completion in between.
  const early = pending ? waitFromNow(deps, res, lookup, waitSeconds * 1000) : undefined;
  // A lost message is recovered by the check-worker's reconciler and the ledger's sweeper.
  const enqueue = pending
    ? deps.producer.enqueue("lookup.run", { lookupId: id }, { jobId: jobIdOf("lookup.run", { lookupId: id }) })
    : requestSettlement(deps.producer, { reservationId });
  await enqueue.catch((err) => req.log.warn({ err, lookupId: id }, "could not enqueue; the reconcilers will pick it up"));
  // Complete when stored (nothing to ask a source): the reply is what a read would give.
  if (!pending) return { status: 200, body: presentLookup(lookupRecordOf(lookup), rows, deps.config.publicBaseUrl) };
  return answerAfterWait(deps, res, caller, id, waitSeconds * 1000, rows.map((r) => r.input), early);
}

