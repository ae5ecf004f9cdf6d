import type { Static, WebhookEndpointSchema } from "@svc/contract";
import type { EndpointRecord } from "@svc/store";

export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;

/** The API shape of an endpoint; `secret` only in the creation response. */
export function presentEndpoint(e: EndpointRecord, secret?: string): WebhookEndpoint {
  const body: WebhookEndpoint = {
    id: e.id,
    object: "webhook_endpoint",
    url: e.url,
    events: e.events,
    status: e.status,
    livemode: e.livemode,
    created_at: e.created_at.toISOString(),
    verified_at: e.verified_at ? e.verified_at.toISOString() : null,
  };
  if (secret !== undefined) body.secret = secret;
  return body;
}
