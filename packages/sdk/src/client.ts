import { InvalidArgumentError } from "./errors";
import { AccountResource, LimitsResource, UsageResource } from "./resources/account";
import { HealthResource, Services, TestKeys } from "./resources/catalog";
import { Jobs } from "./resources/jobs";
import { Lookups } from "./resources/lookups";
import { WebhookEndpoints } from "./resources/webhook-endpoints";
import { assertSecureBaseUrl } from "./safety";
import { DEFAULT_RETRY, type RetryOptions } from "./retry";
import { operations, Transport, type ApiResponse, type FetchLike, type IdempotentRequestOptions, type Logger, type Query } from "./transport";
import { SDK_VERSION } from "./version";
import { webhooks } from "./webhooks";

/** The environment variable the SDK, the CLI and the MCP server read the key from. */
export const API_KEY_ENV = "SVC_API_KEY";
/** The environment variable naming the API's base URL. */
export const BASE_URL_ENV = "SVC_BASE_URL";
/** Where `npm run up` serves the API; used when neither `baseUrl` nor SVC_BASE_URL is set. */
export const DEFAULT_BASE_URL = "http://localhost:8080";
export const DEFAULT_TIMEOUT_MS = 60_000;

export interface ClientOptions {
  /** Default: the SVC_API_KEY environment variable. Calls that need a key throw `missing_api_key` without one. */
  apiKey?: string;
  /**
   * Default: SVC_BASE_URL, else http://localhost:8080. A trailing `/v1` is accepted.
   * Plain `http://` is refused (`invalid_argument`) unless the host is loopback
   * (localhost, 127.0.0.0/8, ::1) or `allowInsecureHttp` is true: the key is in every request.
   */
  baseUrl?: string;
  /**
   * Send the key over plain http to a host that is not loopback (a private network you
   * trust). Default false. Only this option turns it on; no environment variable does.
   */
  allowInsecureHttp?: boolean;
  /** Time allowed for one attempt, in ms (a server-side `wait` is added). Default 60,000. */
  timeoutMs?: number;
  /** Time allowed for a whole call, retries included, in ms. Default: no limit beyond the attempts. */
  totalTimeoutMs?: number;
  /** Retries after the first attempt. Default 2. */
  maxRetries?: number;
  /** Backoff, Retry-After ceiling, and hooks for tests (`random`, `sleep`). */
  retry?: Partial<RetryOptions>;
  /** Default: the platform's `fetch`. */
  fetch?: FetchLike;
  /** Headers sent with every request (never logged). */
  headers?: Record<string, string>;
  /** Receives one debug line per attempt, retry and answer; never the key or any header. */
  logger?: Logger;
  /** Check every JSON answer against the documented shape (`invalid_response` if not). Default true. */
  validateResponses?: boolean;
  /**
   * The API refuses keys in front-end code: in a browser the client refuses to hold a
   * key unless this is true (for a trusted internal tool, say).
   */
  dangerouslyAllowBrowser?: boolean;
}

export interface RawRequest {
  query?: Query;
  /** JSON body. */
  body?: unknown;
  options?: IdempotentRequestOptions;
}

/**
 * The API client: one object, a namespace per resource.
 *
 * ```ts
 * const client = new Client(); // key from SVC_API_KEY
 * const lookup = await client.lookups.create({ numbers: ["+12025550101"], checks: ["spam"] });
 * ```
 *
 * The key lives in a private field: it is absent from `util.inspect(client)`,
 * `JSON.stringify(client)`, errors and logs.
 */
export class Client {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;

  readonly lookups: Lookups;
  readonly jobs: Jobs;
  readonly account: AccountResource;
  readonly limits: LimitsResource;
  readonly usage: UsageResource;
  readonly services: Services;
  readonly webhookEndpoints: WebhookEndpoints;
  /** Delivery verification (`verify`, `sign`, `isEventType`); needs no key. */
  readonly webhooks: typeof webhooks = webhooks;
  readonly health: HealthResource;
  readonly testKeys: TestKeys;

  readonly #transport: Transport;
  readonly #options: ClientOptions;

  constructor(options: ClientOptions = {}) {
    const inherited = inheritFrom;
    inheritFrom = undefined;
    const apiKey = inherited ? undefined : (options.apiKey ?? readEnv(API_KEY_ENV));
    if (apiKey !== undefined && (typeof apiKey !== "string" || apiKey.trim() === "")) throw new InvalidArgumentError("apiKey", "`apiKey` must be a non-empty string.");
    if (apiKey !== undefined && isBrowser() && !options.dangerouslyAllowBrowser) {
      throw new InvalidArgumentError("apiKey", "API keys must not be used in front-end code; call the API from a server (or set dangerouslyAllowBrowser for a trusted internal tool).");
    }
    this.baseUrl = normaliseBaseUrl(options.baseUrl ?? readEnv(BASE_URL_ENV) ?? DEFAULT_BASE_URL, options.allowInsecureHttp === true);
    this.timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS, "timeoutMs");
    const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
    if (options.maxRetries !== undefined) retry.maxRetries = options.maxRetries;
    if (!Number.isInteger(retry.maxRetries) || retry.maxRetries < 0) throw new InvalidArgumentError("maxRetries", "`maxRetries` must be a non-negative integer.");
    this.maxRetries = retry.maxRetries;
    const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (typeof fetchImpl !== "function") throw new InvalidArgumentError("fetch", "No fetch in this runtime: pass `fetch`.");
    this.#options = { ...options, apiKey: undefined };
    const config = {
      baseUrl: this.baseUrl,
      timeoutMs: this.timeoutMs,
      totalTimeoutMs: options.totalTimeoutMs === undefined ? undefined : positive(options.totalTimeoutMs, 0, "totalTimeoutMs"),
      retry,
      fetch: fetchImpl as FetchLike,
      headers: { ...defaultHeaders(), ...options.headers },
      logger: options.logger,
      validateResponses: options.validateResponses !== false,
    };
    this.#transport = inherited ? inherited.derive(config) : new Transport({ ...config, apiKey: apiKey?.trim() });
    this.lookups = new Lookups(this.#transport);
    this.jobs = new Jobs(this.#transport);
    this.account = new AccountResource(this.#transport);
    this.limits = new LimitsResource(this.#transport);
    this.usage = new UsageResource(this.#transport);
    this.services = new Services(this.#transport);
    this.webhookEndpoints = new WebhookEndpoints(this.#transport);
    this.health = new HealthResource(this.#transport);
    this.testKeys = new TestKeys(this.#transport);
  }

  /** Whether a key was given or found in SVC_API_KEY (the key itself is never readable). */
  get hasApiKey(): boolean {
    return this.#transport.hasApiKey;
  }

  /** A client with the same key and some options changed (`timeoutMs`, `maxRetries`, `logger`, …). */
  withOptions(overrides: Omit<ClientOptions, "apiKey">): Client {
    inheritFrom = this.#transport;
    try {
      return new Client({ ...this.#options, baseUrl: this.baseUrl, ...overrides });
    } finally {
      inheritFrom = undefined;
    }
  }

  /**
   * Any operation of the contract by its operationId (`createLookup`, `getJob`, …), with
   * the same retries and checks, and the response's status, headers and request id.
   */
  request<T = unknown>(operationId: string, params: RawRequest & { id?: string } = {}): Promise<ApiResponse<T>> {
    const op = operations().find((o) => o.id === operationId);
    if (!op) return Promise.reject(new InvalidArgumentError("operationId", `Unknown operation ${operationId}.`));
    return this.#transport.call<T>(op, { id: params.id, query: params.query, json: params.body, options: params.options });
  }

  /** What `JSON.stringify(client)` shows: settings, never the key. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, timeoutMs: this.timeoutMs, maxRetries: this.maxRetries, hasApiKey: this.hasApiKey };
  }

  /** What `util.inspect(client)` and `console.log(client)` show. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Client ${JSON.stringify(this.toJSON())}`;
  }
}

/** Set only while `withOptions` constructs a client that keeps this client's key. */
let inheritFrom: Transport | undefined;

function readEnv(name: string): string | undefined {
  try {
    const g = globalThis as { process?: { env?: Record<string, string | undefined> }; Deno?: { env?: { get(n: string): string | undefined } } };
    const value = g.process?.env?.[name] ?? g.Deno?.env?.get(name);
    return value && value.trim() !== "" ? value.trim() : undefined;
  } catch {
    return undefined; // Deno without --allow-env
  }
}

function isBrowser(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  return typeof g.window !== "undefined" && typeof g.document !== "undefined";
}

function normaliseBaseUrl(raw: string, allowInsecureHttp: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError("baseUrl", "`baseUrl` must be an absolute http(s) URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new InvalidArgumentError("baseUrl", "`baseUrl` must be an http(s) URL.");
  if (url.username || url.password || url.search || url.hash) throw new InvalidArgumentError("baseUrl", "`baseUrl` must not carry credentials, a query or a fragment.");
  assertSecureBaseUrl(url, allowInsecureHttp);
  return url.toString().replace(/\/+$/, "").replace(/\/v1$/, "");
}

function positive(value: number | undefined, fallback: number, param: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) throw new InvalidArgumentError(param, `\`${param}\` must be a positive number of milliseconds.`);
  return value;
}

function defaultHeaders(): Record<string, string> {
  // Browsers refuse to let scripts set User-Agent; elsewhere it tells support which SDK called.
  return isBrowser() ? {} : { "User-Agent": `svc-sdk-js/${SDK_VERSION}` };
}
