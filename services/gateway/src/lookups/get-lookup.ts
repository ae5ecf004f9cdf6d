import { ApiError, LIMITS } from "@svc/contract";
import { isId } from "@svc/domain";
import { clientGone } from "../http/client-gone";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { readRows } from "../storing/result-rows";
import type { AnswerDeps } from "./answer-after-wait";
import { awaitLookup } from "./await-lookup";
import { presentLookup } from "./present";

/** GET /v1/lookups/{id}?wait=0..30: the lookup, held until complete or `wait` passes; a completed one may come from the read replica. */
export function getLookupRoute(deps: AnswerDeps): RouteHandler {
  return defineRoute("getLookup")(async ({ caller, params, query, res }) => {
    const id = params.id;
    if (!isId("lookup", id)) throw new ApiError("not_found", { message: "No such lookup." });
    const waitSeconds = Math.min(Number(query.wait ?? 0), deps.config.MAX_WAIT_SECONDS, LIMITS.maxWaitSeconds);
    const { lookup, rows } = await awaitLookup(deps, caller, id, waitSeconds * 1000, clientGone(res), { replicaFirst: true });
    return { status: 200, body: presentLookup(lookup, readRows(rows), deps.config.publicBaseUrl) };
  });
}
