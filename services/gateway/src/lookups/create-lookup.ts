import { ApiError, LIMITS } from "@svc/contract";
import type { Request, Response } from "express";
import type { Caller } from "../caller";
import type { Handler } from "../http/routes";
import { planRequest, type PlanDeps } from "../planning/plan";
import { answerAfterWait } from "./answer-after-wait";
import { createLiveLookup, type LiveLookupDeps } from "./live-lookup";
import { createTestLookup, type LookupBody, type TestLookupDeps } from "./test-lookup";

export type CreateLookupDeps = PlanDeps & LiveLookupDeps & TestLookupDeps;

/** POST /v1/lookup. */
export function createLookupHandler(deps: CreateLookupDeps): Handler {
  const handler: Handler = async ({ req, res, caller, body }: { req: Request; res: Response; caller: Caller | undefined; body: LookupBody }) => {
    if (!caller) throw new ApiError("unauthorized");
    const plan = await planRequest(deps, caller, body, "lookup");
    return caller.livemode ? createLiveLookup(deps, req, res, caller, plan, body) : createTestLookup(deps, req, res, caller, plan, body);
  };
  // The same request, retried after the one that created the lookup died: answer with it.
  handler.recover = async ({ res, caller, body }: { res: Response; caller: Caller | undefined; body: LookupBody }, lookupId: string) => {
    if (!caller) throw new ApiError("unauthorized");
    const inputs = [...(body.numbers ?? []), ...(body.emails ?? [])];
    const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
    return answerAfterWait(deps, res, caller, lookupId, waitSeconds * 1000, inputs);
  };
  return handler;
}

