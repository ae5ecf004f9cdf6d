import {
  AccountSchema,
  CheckResultSchema,
  EstimateSchema,
  JobSchema,
  LookupSchema,
  MoneySchema,
  ProgressSchema,
  ResultRowSchema,
  ROUTES,
  ServiceSchema,
  WebhookEndpointSchema,
  type RouteDef,
} from "./contract";
import {
  APIError,
  apiErrorClass,
  ConnectionError,
  fallbackCode,
  InvalidArgumentError,
  InvalidResponseError,
  MissingApiKeyError,
  SvcError,
  TimeoutError,
  type ApiErrorBody,
} from "./errors";
import { backoffDelay, parseRetryAfter, type RetryOptions } from "./retry";
import { redactDeep, redactSecrets } from "./safety";
import { ShapeChecker } from "./shape";

/** The platform's `fetch`, or anything with its signature (a test double, a proxy-aware fetch). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/**
 * Where the SDK reports what it does (one line per attempt, retry and answer).
 * Fields never include the API key or any header; bodies are never logged.
 */
export interface Logger {
  debug?(message: string, fields: Record<string, unknown>): void;
  warn?(message: string, fields: Record<string, unknown>): void;
}

/** Per-call options, accepted as the last argument of every method. */
export interface RequestOptions {
  /** Aborts the call (including waits between retries); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time allowed for one attempt, in ms; a server-side `wait` is added to it. */
  timeoutMs?: number;
  /** Time allowed for the whole call, retries and waits included, in ms. */
  totalTimeoutMs?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

/** For POST /v1/lookup and POST /v1/jobs: the key the API uses to recognise a resent request. */
export interface IdempotentRequestOptions extends RequestOptions {
  /** 1–255 printable ASCII characters. Default: a random UUID generated once per call and reused by every retry. */
  idempotencyKey?: string;
}

/** What `client.request()` resolves to: the body and what came with it. */
export interface ApiResponse<T> {
  data: T;
  status: number;
  headers: Headers;
  /** `X-Request-Id` of the answer. */
  requestId: string | null;
  /** HTTP attempts it took (1 = no retry). */
  attempts: number;
  /** The Idempotency-Key sent, if the operation takes one. */
  idempotencyKey: string | null;
  /** True when the API replayed the stored answer of an earlier request with the same key. */
  replayed: boolean;
}

export type Operation = {
  id: string;
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  auth: RouteDef["auth"];
  /** The API accepts an Idempotency-Key on it (the contract says which: POST /v1/lookup, POST /v1/jobs); the SDK always sends one. */
  idempotencyKey: boolean;
  /**
   * Safe to send again, so retried automatically, both after a retryable answer and
   * after a lost one (connection error, timeout). See `isRepeatable`; a retryable 429
   * is retried whatever this says (`shouldRetry`).
   */
  repeatable: boolean;
  responses: RouteDef["responses"];
};

/** POSTs that store and charge nothing (the spec: the estimate "validates and counts a list for free"). */
const STATELESS_POSTS = new Set(["estimateJob"]);

/**
 * The one retry rule, part one: which operations are safe to send twice. GET and
 * DELETE; a POST the API accepts an Idempotency-Key for (the SDK sends one on every
 * such POST and reuses it on every attempt, so the API answers a resend with the first
 * result); and a POST that stores nothing. Any other POST or PATCH (creating or
 * changing a webhook endpoint, queueing a test delivery, requesting a test key) is not
 * retried after a 500, a 503 or a lost connection: those may come after the API acted,
 * and a second attempt could act again. Its error keeps the API's `retryable` flag for
 * the caller to decide. Part two is `shouldRetry`.
 */
export function isRepeatable(method: Operation["method"], idempotencyKey: boolean, operationId: string): boolean {
  if (method === "GET" || method === "DELETE") return true;
  if (method === "POST") return idempotencyKey || STATELESS_POSTS.has(operationId);
  return false;
}

const OPERATIONS = new Map<string, Operation>(
  ROUTES.map((r) => {
    const method = r.method.toUpperCase() as Operation["method"];
    const idempotencyKey = r.idempotent === true;
    const op: Operation = {
      id: r.operationId,
      method,
      path: r.path,
      auth: r.auth,
      idempotencyKey,
      repeatable: isRepeatable(method, idempotencyKey, r.operationId),
      responses: r.responses,
    };
    return [r.operationId, op];
  }),
);

/**
 * The one retry rule, part two: whether a failed attempt is sent again (within
 * `maxRetries`, the time limits and a reasonable `Retry-After`).
 *
 * - A 429 the API marks retryable (`rate_limited`, `daily_cap_reached`, a proxy's
 *   bare 429), for every operation, whatever its method: a 429 is a refusal before any
 *   work (the rate limiter runs before the handler; a cap refuses the reservation), so
 *   the API did nothing and a second attempt cannot do a thing twice.
 * - Any other answer the API marks retryable, and a lost answer (connection error,
 *   timeout), only for the operations `isRepeatable` allows.
 *
 * An answer marked not retryable (a `429 spend_cap_reached` too) is never retried.
 */
export function shouldRetry(op: Pick<Operation, "repeatable">, failure: SvcError): boolean {
  if (failure instanceof APIError) return failure.retryable && (op.repeatable || failure.status === 429);
  return op.repeatable && failure.retryable;
}

/** The contract's route for an operation id (`createLookup`, `getJob`, …). */
export function operation(id: string): Operation {
  const op = OPERATIONS.get(id);
  if (!op) throw new Error(`The contract has no operation ${id}`);
  return op;
}

export const operations = (): Operation[] => [...OPERATIONS.values()];

/** Named schemas that responses refer to with `$ref`. */
export const shapes = new ShapeChecker([MoneySchema, CheckResultSchema, ResultRowSchema, ProgressSchema, EstimateSchema, JobSchema, LookupSchema, AccountSchema, ServiceSchema, WebhookEndpointSchema]);

export type Query = Record<string, string | number | boolean | null | undefined>;

export type CallArgs = {
  id?: string;
  query?: Query;
  json?: unknown;
  form?: FormData;
  /** Seconds the server is asked to hold the request (`wait`): added to the attempt's time limit. */
  waitSeconds?: number;
  accept?: string;
  options?: IdempotentRequestOptions;
};

export type TransportConfig = {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  totalTimeoutMs: number | undefined;
  retry: RetryOptions;
  fetch: FetchLike;
  headers: Record<string, string>;
  logger: Logger | undefined;
  validateResponses: boolean;
};

/** An open streaming answer (downloads): the caller reads the body, then calls `done()`. */
export type OpenResponse = {
  response: Response;
  requestId: string | null;
  attempts: number;
  /** Aborts the underlying request (idle timeout, caller gave up). */
  abort(reason?: unknown): void;
  /** Releases the caller's abort signal. */
  done(): void;
  /** The transport's key scrubber, for errors raised while the body is read. */
  scrub(text: string): string;
};

type Attempt = { kind: "json"; value: ApiResponse<unknown> } | { kind: "open"; value: OpenResponse };

/**
 * Sends requests: authentication, idempotency keys, time limits, retries and
 * response checks. Holds the API key in a private field only.
 */
export class Transport {
  readonly #key: string | undefined;
  readonly #config: TransportConfig;
  readonly #warned = new Set<string>();

  constructor(config: TransportConfig) {
    this.#key = config.apiKey;
    this.#config = { ...config, apiKey: undefined };
  }

  /** A transport with other settings and the same key. */
  derive(config: Omit<TransportConfig, "apiKey">): Transport {
    return new Transport({ ...config, apiKey: this.#key });
  }

  get hasApiKey(): boolean {
    return this.#key !== undefined;
  }

  /** Time allowed for one attempt (ms); also the idle limit of a download. */
  get timeoutMs(): number {
    return this.#config.timeoutMs;
  }

  /** Calls an operation of the contract and returns its JSON body, checked against the documented shape. */
  async call<T>(op: Operation, args: CallArgs = {}): Promise<ApiResponse<T>> {
    const out = await this.#run(op, args, false);
    return (out as Extract<Attempt, { kind: "json" }>).value as ApiResponse<T>;
  }

  /** Calls an operation and hands back the unread body (downloads). */
  async open(op: Operation, args: CallArgs = {}): Promise<OpenResponse> {
    const out = await this.#run(op, args, true);
    return (out as Extract<Attempt, { kind: "open" }>).value;
  }

  /** Removes the key (and anything key-shaped) from text that came from elsewhere: an API answer, an exception of a custom fetch. */
  scrub(text: string): string {
    return redactSecrets(text, [this.#key]);
  }

  async #run(op: Operation, args: CallArgs, stream: boolean): Promise<Attempt> {
    const cfg = this.#config;
    const opts = args.options ?? {};
    const key = this.#key;
    if (op.auth === "key" && key === undefined) throw new MissingApiKeyError();
    const url = this.#url(op, args);
    const idempotencyKey = op.idempotencyKey ? checkedIdempotencyKey(opts.idempotencyKey) : null;

    const headers: Record<string, string> = { Accept: args.accept ?? "application/json", ...cfg.headers, ...opts.headers };
    if (key !== undefined && op.auth !== "none") headers.Authorization = `Bearer ${key}`;
    if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
    let body: string | FormData | undefined;
    if (args.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(args.json);
    } else if (args.form) body = args.form;

    const maxRetries = opts.maxRetries ?? cfg.retry.maxRetries;
    const perAttempt = (opts.timeoutMs ?? cfg.timeoutMs) + Math.max(0, args.waitSeconds ?? 0) * 1000;
    const total = opts.totalTimeoutMs ?? cfg.totalTimeoutMs;
    const deadline = total === undefined ? Infinity : Date.now() + total;
    const signal = opts.signal;
    const log = cfg.logger;

    for (let attempt = 1; ; attempt += 1) {
      if (signal?.aborted) throw signal.reason;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new TimeoutError(`No answer within the call's total time limit (${total} ms).`, { attempts: attempt - 1, retryable: op.repeatable });
      const limit = Math.min(perAttempt, remaining);
      const ctl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctl.abort(new Error("timeout"));
      }, limit);
      const onAbort = () => ctl.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const release = () => signal?.removeEventListener("abort", onAbort);
      let keepOpen = false;
      let failure: SvcError;
      const started = Date.now();
      try {
        log?.debug?.("request", { operation: op.id, method: op.method, path: pathOf(url), attempt });
        const res = await cfg.fetch(url, { method: op.method, headers, body, signal: ctl.signal });
        const requestId = res.headers.get("x-request-id");
        this.#noticeDeprecation(op, res);
        if (res.ok) {
          if (stream) {
            clearTimeout(timer);
            keepOpen = true;
            log?.debug?.("response", { operation: op.id, status: res.status, requestId, attempt, ms: Date.now() - started });
            return { kind: "open", value: { response: res, requestId, attempts: attempt, abort: (reason) => ctl.abort(reason), done: release, scrub: (text) => this.scrub(text) } };
          }
          const data = await this.#readBody(op, res, requestId, attempt);
          log?.debug?.("response", { operation: op.id, status: res.status, requestId, attempt, ms: Date.now() - started });
          return {
            kind: "json",
            value: { data, status: res.status, headers: res.headers, requestId, attempts: attempt, idempotencyKey, replayed: res.headers.get("idempotent-replayed") === "true" },
          };
        }
        failure = await this.#apiError(res, requestId, attempt);
        log?.debug?.("response", { operation: op.id, status: res.status, requestId, code: failure.code, attempt, ms: Date.now() - started });
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (err instanceof SvcError) throw err;
        failure = timedOut
          ? new TimeoutError(`No answer within ${limit} ms.`, { attempts: attempt, retryable: op.repeatable })
          : new ConnectionError(this.scrub(`Could not reach the API (${describe(err)}).`), { attempts: attempt, cause: this.#safeCause(err), retryable: op.repeatable });
        log?.debug?.("no answer", { operation: op.id, code: failure.code, attempt, ms: Date.now() - started });
      } finally {
        clearTimeout(timer);
        if (!keepOpen) release();
      }

      // One rule (isRepeatable, shouldRetry): a retryable 429 for every operation; anything else only for operations safe to send twice.
      if (!shouldRetry(op, failure) || attempt > maxRetries) throw failure;
      const retryAfter = failure instanceof APIError ? failure.retryAfterMs : null;
      if (retryAfter !== null && retryAfter > cfg.retry.maxRetryAfterMs) throw failure;
      const delay = retryAfter ?? backoffDelay(attempt, cfg.retry);
      if (Date.now() + delay >= deadline) throw failure;
      log?.debug?.("retry", { operation: op.id, code: failure.code, requestId: failure.requestId, attempt, delayMs: delay, retryAfter: retryAfter !== null });
      await cfg.retry.sleep(delay, signal);
    }
  }

  #url(op: Operation, args: CallArgs): string {
    let path = op.path;
    if (path.includes("{id}")) {
      if (typeof args.id !== "string" || args.id.length === 0) throw new InvalidArgumentError("id", "An object id (a non-empty string) is required.");
      path = path.replace("{id}", encodeURIComponent(args.id));
    }
    let url = this.#config.baseUrl + path;
    if (args.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(args.query)) if (v !== undefined) q.append(k, v === null ? "null" : String(v));
      const s = q.toString();
      if (s) url += `?${s}`;
    }
    return url;
  }

  async #readBody(op: Operation, res: Response, requestId: string | null, attempts: number): Promise<unknown> {
    const text = await res.text();
    const schema = op.responses[res.status]?.schema ?? Object.values(op.responses).find((r) => r.schema)?.schema;
    if (res.status === 204 || (text === "" && !schema)) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new InvalidResponseError(`The API's answer to ${op.id} (HTTP ${res.status}) is not JSON.`, { status: res.status, requestId, attempts });
    }
    if (this.#config.validateResponses && schema) {
      const bad = shapes.check(schema, data);
      if (bad !== null) throw new InvalidResponseError(`The API's answer to ${op.id} is not the documented shape (at ${bad}).`, { status: res.status, requestId, attempts });
    }
    return data;
  }

  async #apiError(res: Response, requestId: string | null, attempts: number): Promise<APIError> {
    let body: ApiErrorBody | null = null;
    try {
      const parsed = JSON.parse(await res.text()) as { error?: Partial<ApiErrorBody> };
      const e = parsed?.error;
      if (e && typeof e === "object" && typeof e.code === "string" && typeof e.message === "string") {
        body = { ...e, code: e.code, message: e.message, status: typeof e.status === "number" ? e.status : res.status, retryable: e.retryable === true, param: typeof e.param === "string" ? e.param : null };
      }
    } catch {
      // Not an error object (a proxy's page, a cut body): classified by status below.
    }
    const Cls = apiErrorClass(body?.code ?? fallbackCode(res.status), res.status);
    // An answer may quote the request back (a proxy's error page, a gateway that echoes the Authorization
    // header): its message, suggestion, every field of its body and its headers are scrubbed before they
    // become an error the caller will print or log.
    const scrub = (text: string) => this.scrub(text);
    return new Cls({
      status: res.status,
      body: body === null ? null : redactDeep(body, scrub),
      headers: this.#scrubHeaders(res.headers),
      requestId: requestId === null ? null : scrub(requestId),
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after")),
      attempts,
    });
  }

  /** The answer's headers, or a scrubbed copy when one of them quotes the key. */
  #scrubHeaders(headers: Headers): Headers {
    let leaks = false;
    headers.forEach((value) => {
      if (this.scrub(value) !== value) leaks = true;
    });
    if (!leaks) return headers;
    const copy = new Headers();
    headers.forEach((value, name) => copy.append(name, this.scrub(value)));
    return copy;
  }

  #noticeDeprecation(op: Operation, res: Response): void {
    const deprecation = res.headers.get("deprecation");
    if (!deprecation || this.#warned.has(op.id)) return;
    this.#warned.add(op.id);
    this.#config.logger?.warn?.("deprecated operation", { operation: op.id, deprecation, sunset: res.headers.get("sunset"), link: res.headers.get("link") });
  }

  /** The cause of a connection error, unless something in it shows the key (then a scrubbed copy). */
  #safeCause(err: unknown): unknown {
    const key = this.#key;
    if (!key) return err;
    let text = "";
    for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
      text += ` ${String((e as Error).message)} ${String((e as Error).stack)}`;
      try {
        text += JSON.stringify(e);
      } catch {
        // circular: message and stack are what matter
      }
    }
    return this.scrub(text) !== text ? new Error(this.scrub(describe(err))) : err;
  }
}

/** `ECONNREFUSED`, `UND_ERR_SOCKET: other side closed`: the useful part of a fetch failure. */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const x = e as { code?: unknown; message?: unknown };
    const part = [typeof x.code === "string" ? x.code : "", typeof x.message === "string" ? x.message : ""].filter(Boolean).join(": ");
    if (part && !parts.includes(part)) parts.push(part);
  }
  return parts.join("; ") || "no answer";
}

const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, "");

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

function checkedIdempotencyKey(given: string | undefined): string {
  if (given === undefined) return newIdempotencyKey();
  if (typeof given !== "string" || !IDEMPOTENCY_KEY.test(given)) throw new InvalidArgumentError("idempotencyKey", "An Idempotency-Key is 1-255 printable ASCII characters.");
  return given;
}

export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === "function") return c.randomUUID();
  const bytes = new Uint8Array(16);
  c.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
