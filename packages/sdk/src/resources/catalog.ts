import { operation, type RequestOptions, type Transport } from "../transport";
import type { Health, ServiceList, TestKey, TestKeyChallenge, TestKeyCreateParams } from "../types";

/** GET /v1/services: without a key the public catalog; with one, the account's checks and prices. */
export class Services {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  async list(options?: RequestOptions): Promise<ServiceList> {
    return (await this.#t.call<ServiceList>(operation("listServices"), { options })).data;
  }
}

/** GET /v1/health (no key). A 503 throws `TemporarilyUnavailableError`; not retried unless asked. */
export class HealthResource {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  async check(options: RequestOptions = {}): Promise<Health> {
    return (await this.#t.call<Health>(operation("getHealth"), { options: { maxRetries: 0, ...options } })).data;
  }
}

/** Personal test keys (no key needed): a proof-of-work challenge, then the key. */
export class TestKeys {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }
  /** A single-use challenge; solve it as the API reference describes and send `challenge_token`. */
  async challenge(options?: RequestOptions): Promise<TestKeyChallenge> {
    return (await this.#t.call<TestKeyChallenge>(operation("getTestKeyChallenge"), { options })).data;
  }
  /** The key is in `key`, shown once. */
  async create(params: TestKeyCreateParams, options?: RequestOptions): Promise<TestKey> {
    return (await this.#t.call<TestKey>(operation("createTestKey"), { json: params, options })).data;
  }
}
