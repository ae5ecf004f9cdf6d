import { operation, type RequestOptions, type Transport } from "../transport";
import type { WebhookEndpoint, WebhookEndpointCreateParams, WebhookEndpointList, WebhookEndpointUpdateParams, WebhookTestQueued } from "../types";

/** Webhook endpoints of the key's mode (scope `webhooks:manage`). */
export class WebhookEndpoints {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  async list(options?: RequestOptions): Promise<WebhookEndpointList> {
    return (await this.#t.call<WebhookEndpointList>(operation("listWebhookEndpoints"), { options })).data;
  }

  /** Creates a `pending_verification` endpoint. `secret` (whsec_…) is in this answer only: store it. */
  async create(params: WebhookEndpointCreateParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return (await this.#t.call<WebhookEndpoint>(operation("createWebhookEndpoint"), { json: params, options })).data;
  }

  /** Changes `url` and/or `events`; a new URL is verified again before events flow. */
  async update(id: string, params: WebhookEndpointUpdateParams, options?: RequestOptions): Promise<WebhookEndpoint> {
    return (await this.#t.call<WebhookEndpoint>(operation("updateWebhookEndpoint"), { id, json: params, options })).data;
  }

  /** Deletes the endpoint; nothing is delivered to it afterwards. */
  async delete(id: string, options?: RequestOptions): Promise<void> {
    await this.#t.call<undefined>(operation("deleteWebhookEndpoint"), { id, options });
  }

  /** Queues a signed `webhook.test` event to the endpoint (delivered even before verification). */
  async test(id: string, options?: RequestOptions): Promise<WebhookTestQueued> {
    return (await this.#t.call<WebhookTestQueued>(operation("testWebhookEndpoint"), { id, options })).data;
  }
}
