import { ApiError, buildOpenApi } from "@svc/contract";
import { databaseReachable } from "@svc/store";
import type { Deps } from "../deps";
import type { Handler, Handlers } from "../http/routes";

export function healthHandler(deps: Pick<Deps, "store" | "now">): Handler {
  return async () => {
    if (!(await databaseReachable(deps.store.pool))) {
      throw new ApiError("temporarily_unavailable", { message: "The database is unreachable.", retryAfterSeconds: 5 });
    }
    return { status: 200, body: { status: "ok", database: "ok", time: deps.now().toISOString() }, headers: { "Cache-Control": "no-store" } };
  };
}

export function openApiHandler(deps: Pick<Deps, "config">): Handler {
  const document = buildOpenApi(deps.config.publicBaseUrl);
  return async () => ({ status: 200, body: document });
}

/** GET /v1/health and GET /v1/openapi.json. */
export function systemRoutes(deps: Pick<Deps, "store" | "config" | "now">): Handlers {
  return { getHealth: healthHandler(deps), getOpenApi: openApiHandler(deps) };
}
