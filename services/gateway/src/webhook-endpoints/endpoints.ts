import { ApiError } from "@svc/contract";
import { notifyDispatcher } from "@svc/flows";
import {
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_MODE,
  recordTestEvent,
  updateEndpoint,
  withTransaction,
} from "@svc/store";
import { checkWebhookUrl, encryptSecret, newSigningSecret, WebhookUrlError } from "@svc/webhooks";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { presentEndpoint } from "./present";

/** Endpoint changes are recorded as events and announced to the dispatcher; URLs are resolved and checked. */
export type EndpointDeps = Pick<Deps, "store" | "config" | "resolveHost" | "producer" | "logger" | "now">;

const owner = (caller: Caller) => ({ accountId: caller.accountId, livemode: caller.livemode });

/** `https://` only, resolving only to public addresses: checked here and again at every delivery. */
async function acceptableUrl(deps: Pick<Deps, "resolveHost" | "config">, url: string): Promise<string> {
  try {
    const checked = await checkWebhookUrl(url, deps.resolveHost, deps.config.webhooks.policy);
    return checked.url.toString();
  } catch (err) {
    if (err instanceof WebhookUrlError) throw new ApiError("invalid_request", { param: "url", message: err.message });
    throw err;
  }
}

/** GET /v1/webhook_endpoints: the key's mode, deleted ones left out. */
export function listEndpointsRoute(deps: Pick<Deps, "store">): RouteHandler {
  return defineRoute("listWebhookEndpoints")(async ({ caller }) => {
    const endpoints = await listEndpoints(deps.store.pool, owner(caller));
    return { status: 200, body: { object: "list", data: endpoints.map((e) => presentEndpoint(e)) } };
  });
}

/** POST /v1/webhook_endpoints: pending verification, the secret shown once, the first challenge queued. */
export function createEndpointRoute(deps: EndpointDeps): RouteHandler {
  return defineRoute("createWebhookEndpoint")(async ({ caller, body }) => {
    const url = await acceptableUrl(deps, body.url);
    const secret = newSigningSecret();
    const created = await withTransaction(deps.store.pool, (client) =>
      createEndpoint(client, { ...owner(caller), url, events: body.events, secretEncrypted: encryptSecret(deps.config.webhooks.dataKey, secret), now: deps.now() }),
    );
    if (created === "limit_reached") {
      throw new ApiError("invalid_request", { message: `An account can have at most ${MAX_ENDPOINTS_PER_MODE} webhook endpoints per mode; delete one first.` });
    }
    await notifyDispatcher(deps, [created.eventId]);
    return { status: 201, body: presentEndpoint(created.endpoint, secret) };
  });
}

/** PATCH /v1/webhook_endpoints/{id}: a new URL is verified again; events wait for it. */
export function updateEndpointRoute(deps: EndpointDeps): RouteHandler {
  return defineRoute("updateWebhookEndpoint")(async ({ caller, body, params }) => {
    const url = body.url === undefined ? undefined : await acceptableUrl(deps, body.url);
    const updated = await withTransaction(deps.store.pool, (client) => updateEndpoint(client, owner(caller), params.id, { url, events: body.events, now: deps.now() }));
    if (!updated) throw new ApiError("not_found", { message: "No such webhook endpoint." });
    await notifyDispatcher(deps, [updated.eventId]);
    return { status: 200, body: presentEndpoint(updated.endpoint) };
  });
}

/** DELETE /v1/webhook_endpoints/{id}: 204; nothing not yet sent is delivered. */
export function deleteEndpointRoute(deps: Pick<Deps, "store" | "now">): RouteHandler {
  return defineRoute("deleteWebhookEndpoint")(async ({ caller, params }) => {
    const deleted = await withTransaction(deps.store.pool, (client) => deleteEndpoint(client, owner(caller), params.id, deps.now()));
    if (!deleted) throw new ApiError("not_found", { message: "No such webhook endpoint." });
    return { status: 204 };
  });
}

/** POST /v1/webhook_endpoints/{id}/test: 202; a signed webhook.test goes out even before verification. */
export function testEndpointRoute(deps: Pick<Deps, "store" | "producer" | "logger" | "now">): RouteHandler {
  return defineRoute("testWebhookEndpoint")(async ({ caller, params }) => {
    const eventId = await withTransaction(deps.store.pool, async (client) => {
      const endpoint = await findEndpoint(client, owner(caller), params.id);
      return endpoint ? recordTestEvent(client, owner(caller), endpoint.id, deps.now()) : null;
    });
    if (!eventId) throw new ApiError("not_found", { message: "No such webhook endpoint." });
    await notifyDispatcher(deps, [eventId]);
    return { status: 202, body: { object: "event", id: eventId, type: "webhook.test" } };
  });
}
