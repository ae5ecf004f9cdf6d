import express, { type Request } from "express";
import { ApiError, ROUTES } from "@svc/contract";
import type { Deps, Reply } from "./context";
import { errorHandler } from "./http/errors";
import { installRequestLog, requestContext } from "./http/request-context";
import { mountRoutes, type Handlers } from "./http/routes";
import { getAccountHandler, getLimitsHandler, getUsageHandler } from "./account/account";
import { listServicesHandler } from "./handlers/catalog";
import { healthHandler, openApiHandler } from "./handlers/system";
import { createLookupHandler } from "./lookups/create-lookup";
import { getLookupHandler } from "./lookups/get-lookup";
import { challengeHandler, createTestKeyHandler, testKeyNetworkLimit } from "./test-keys/create-test-key";
import { errorsPage, referencePage, testKeyPage } from "./pages/pages";
import { createJobHandler, estimateJobHandler } from "./jobs/create-job";
import { deleteJobHandler, getJobHandler } from "./jobs/read-job";
import { listJobResultsHandler } from "./jobs/results";
import { downloadJobHandler } from "./jobs/download";
import { createEndpointHandler, deleteEndpointHandler, listEndpointsHandler, testEndpointHandler, updateEndpointHandler } from "./webhooks/endpoints";

export function handlers(deps: Deps): Handlers {
  return {
    getHealth: healthHandler(deps),
    getOpenApi: openApiHandler(deps),
    listServices: listServicesHandler(deps),
    getTestKeyChallenge: challengeHandler(deps),
    createTestKey: createTestKeyHandler(deps),
    createLookup: createLookupHandler(deps),
    getLookup: getLookupHandler(deps),
    getAccount: getAccountHandler(deps),
    getLimits: getLimitsHandler(deps),
    getUsage: getUsageHandler(deps),
    estimateJob: estimateJobHandler(deps),
    createJob: createJobHandler(deps),
    getJob: getJobHandler(deps),
    deleteJob: deleteJobHandler(deps),
    listJobResults: listJobResultsHandler(deps),
    downloadJobResults: downloadJobHandler(deps),
    listWebhookEndpoints: listEndpointsHandler(deps),
    createWebhookEndpoint: createEndpointHandler(deps),
    updateWebhookEndpoint: updateEndpointHandler(deps),
    deleteWebhookEndpoint: deleteEndpointHandler(deps),
    testWebhookEndpoint: testEndpointHandler(deps),
  };
}

export function docBaseUrl(deps: Deps): string {
  return `${deps.config.publicBaseUrl}/docs/errors`;
}

/**
 * The gateway's HTTP application. Order matters: request id first; then the
 * route table (each route authenticates itself, so an unknown path is a 404
 * before any key is looked at); then 404; then the error renderer.
 */
export function createApp(deps: Deps, extra: { routes?: typeof ROUTES; handlers?: Handlers } = {}): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false);
  app.set("query parser", "simple");
  installRequestLog(app.request);
  app.use(requestContext(deps.logger));

  const testKey = testKeyPage(deps);
  app.get("/get-test-key", testKey.page);
  app.get("/get-test-key.js", testKey.script);
  app.get("/get-test-key/pow-solver.js", testKey.solver);
  app.get("/get-test-key/pow-worker.js", testKey.worker);
  app.get("/get-test-key.css", testKey.stylesheet);
  const reference = referencePage(deps);
  app.get("/docs", reference.page);
  app.get("/docs/errors", errorsPage());
  app.get("/docs/assets/:name", reference.asset);
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
