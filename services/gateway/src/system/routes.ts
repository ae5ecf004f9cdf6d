import { ApiError, buildOpenApi } from "@svc/contract";
import { databaseReachable } from "@svc/store";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";

/** GET /v1/health: 200 while the database answers, else 503 with Retry-After. */
export function healthRoute(deps: Pick<Deps, "store" | "now">): RouteHandler {
  return defineRoute("getHealth")(async () => {
    if (!(await databaseReachable(deps.store.pool))) {
      throw new ApiError("temporarily_unavailable", { message: "The database is unreachable.", retryAfterSeconds: 5 });
    }
    return { status: 200, body: { status: "ok", database: "ok", time: deps.now().toISOString() }, headers: { "Cache-Control": "no-store" } };
  });
}

/** GET /v1/openapi.json: the contract's document, for this deployment's base URL. */
export function openApiRoute(deps: Pick<Deps, "config">): RouteHandler {
  const document = buildOpenApi(deps.config.publicBaseUrl);
  return defineRoute("getOpenApi")(async () => ({ status: 200, body: document }));
}

export function systemRoutes(deps: Pick<Deps, "store" | "config" | "now">): RouteHandler[] {
  return [healthRoute(deps), openApiRoute(deps)];
}
