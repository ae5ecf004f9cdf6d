import { ApiError, buildOpenApi } from "@svc/contract";
import { databaseReachable } from "@svc/store";
import type { Deps } from "../context";
import type { Handler } from "../http/routes";

export function healthHandler(deps: Deps): Handler {
  return async () => {
    if (!(await databaseReachable(deps.store.pool))) {
      throw new ApiError("temporarily_unavailable", { message: "The database is unreachable.", retryAfterSeconds: 5 });
    }
    return { status: 200, body: { status: "ok", database: "ok", time: deps.now().toISOString() }, headers: { "Cache-Control": "no-store" } };
  };
}

export function openApiHandler(deps: Deps): Handler {
  const document = buildOpenApi(deps.config.publicBaseUrl);
  return async () => ({ status: 200, body: document });
}
