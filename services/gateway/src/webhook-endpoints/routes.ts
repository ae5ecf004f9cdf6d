import type { RouteHandler } from "../http/define-route";
import { createEndpointRoute, deleteEndpointRoute, listEndpointsRoute, testEndpointRoute, updateEndpointRoute, type EndpointDeps } from "./endpoints";

/** /v1/webhook_endpoints: list, create, update, delete, send a test event. */
export function webhookEndpointRoutes(deps: EndpointDeps): RouteHandler[] {
  return [listEndpointsRoute(deps), createEndpointRoute(deps), updateEndpointRoute(deps), deleteEndpointRoute(deps), testEndpointRoute(deps)];
}
