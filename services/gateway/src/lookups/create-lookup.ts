import { LIMITS } from "@svc/contract";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { planRequest, type PlanDeps } from "../planning/plan";
import { answerAfterWait } from "./answer-after-wait";
import { createLiveLookup, type LiveLookupDeps } from "./live-lookup";
import { createTestLookup, type TestLookupDeps } from "./test-lookup";

export type CreateLookupDeps = PlanDeps & LiveLookupDeps & TestLookupDeps;

/** POST /v1/lookup. */
export function createLookupRoute(deps: CreateLookupDeps): RouteHandler {
  return defineRoute("createLookup")(
    async ({ req, res, caller, body }) => {
      const plan = await planRequest(deps, caller, body, "lookup");
      return caller.livemode ? createLiveLookup(deps, req, res, caller, plan, body) : createTestLookup(deps, req, res, caller, plan, body);
    },
    {
      // The same request, retried after the one that created the lookup died: answer with it.
      recover: async ({ res, caller, body }, lookupId) => {
        const inputs = [...(body.numbers ?? []), ...(body.emails ?? [])];
        const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
        return answerAfterWait(deps, res, caller, lookupId, waitSeconds * 1000, inputs);
      },
    },
  );
}
