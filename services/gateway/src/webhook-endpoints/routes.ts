import type { Handlers } from "../http/routes";
import { createEndpointHandler, deleteEndpointHandler, listEndpointsHandler, testEndpointHandler, updateEndpointHandler, type EndpointDeps } from "./endpoints";

/** /v1/webhook_endpoints: list, create, update, delete, send a test event. */
export function webhookEndpointRoutes(deps: EndpointDeps): Handlers {
  return {
    listWebhookEndpoints: listEndpointsHandler(deps),
    createWebhookEndpoint: createEndpointHandler(deps),
    updateWebhookEndpoint: updateEndpointHandler(deps),
    deleteWebhookEndpoint: deleteEndpointHandler(deps),
    testWebhookEndpoint: testEndpointHandler(deps),
  };
}
