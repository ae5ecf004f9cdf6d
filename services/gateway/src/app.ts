import express, { type Request } from "express";
import { ApiError, ROUTES } from "@svc/contract";
import type { NewLookup } from "@svc/store";
import { accountRoutes } from "./account/routes";
import type { BulkIntake } from "./bulk";
import { catalogRoutes } from "./catalog/routes";
import type { Deps } from "./deps";
import { errorHandler } from "./http/errors";
import { installRequestLog, requestContext } from "./http/request-context";
import { mountRoutes, type Handlers, type Reply } from "./http/routes";
import { jobRoutes } from "./jobs/routes";
import { lookupRoutes } from "./lookups/routes";
import type { GroupCommit } from "./lookups/test-batch";
import { mountPages } from "./pages/routes";
import { systemRoutes } from "./system/routes";
import { testKeyNetworkLimit, testKeyRoutes } from "./test-keys/routes";
import { webhookEndpointRoutes } from "./webhook-endpoints/routes";

/**
 * Everything the gateway's application uses, built once in main.ts (or by a test):
 * the process's shared resources, plus what one feature owns — the intake threads
 * (jobs) and the writer that group-commits test lookups (lookups).
 */
export type GatewayDeps = Deps & {
  /** Threads that read, validate and plan bulk requests, fairly shared between accounts. */
  bulk: BulkIntake;
  /** Test lookups without an Idempotency-Key, written in groups (see testLookupWriter); drained before the pool closes. */
  testLookups: GroupCommit<NewLookup>;
};

/** Every operation's handler, by operationId, feature by feature. */
export function handlers(deps: GatewayDeps): Handlers {
  const routes = [
    ...systemRoutes(deps),
    ...catalogRoutes(deps),
    ...testKeyRoutes(deps),
    ...lookupRoutes(deps),
    ...accountRoutes(deps),
    ...jobRoutes(deps),
    ...webhookEndpointRoutes(deps),
  ];
  return Object.fromEntries(routes.map((route) => [route.operationId, route]));
}

export function docBaseUrl(deps: Pick<Deps, "config">): string {
  return `${deps.config.publicBaseUrl}/docs/errors`;
}

/**
 * The gateway's HTTP application. Order matters: request id first; then the pages;
 * then the route table (each route authenticates itself, so an unknown path is a 404
 * before any key is looked at); then 404; then the error renderer.
 */
export function createApp(deps: GatewayDeps, extra: { routes?: typeof ROUTES; handlers?: Handlers } = {}): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false);
  app.set("query parser", "simple");
  installRequestLog(app.request);
  app.use(requestContext(deps.logger));

  mountPages(app, deps);
  app.post("/v1/test-keys", testKeyNetworkLimit(deps));

  const renderError = (req: Request, err: ApiError): Reply => ({
    status: err.status,
    body: err.toBody(req.id, docBaseUrl(deps)),
    headers: err.retryAfterSeconds !== undefined ? { "Retry-After": String(Math.ceil(err.retryAfterSeconds)) } : {},
  });
  mountRoutes(app, deps, [...ROUTES, ...(extra.routes ?? [])], { ...handlers(deps), ...(extra.handlers ?? {}) }, renderError);

  app.use((_req, _res, next) => next(new ApiError("not_found", { message: "No such path." })));
  app.use(errorHandler(docBaseUrl(deps)));
  return app;
}
