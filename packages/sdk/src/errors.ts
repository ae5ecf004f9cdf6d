import { ERROR_CODES, type ErrorCode } from "./contract";

/** Codes the SDK raises itself, for what never reached the API or came back unreadable. */
export type ClientErrorCode = "missing_api_key" | "connection_error" | "timeout" | "invalid_response" | "invalid_argument";

/** A documented API code, a client-side code, or a code newer than this SDK. */
export type SvcErrorCode = ErrorCode | ClientErrorCode | (string & {});

export type SvcErrorInit = {
  code: SvcErrorCode;
  message: string;
  status?: number | null;
  retryable?: boolean;
  param?: string | null;
  requestId?: string | null;
  attempts?: number;
  cause?: unknown;
};

/**
 * Base class of every error the SDK throws (except a caller's own abort, which
 * rethrows the signal's reason). Branch on `code`; `instanceof` works too.
 * Messages never contain the API key or submitted identifiers.
 */
export class SvcError extends Error {
  readonly code: SvcErrorCode;
  /** HTTP status, or null when no response was received. */
  readonly status: number | null;
  readonly retryable: boolean;
  /** Field at fault (`checks[1]`, `numbers`, `file`, …) or null. */
  readonly param: string | null;
  /** `X-Request-Id` of the response, or null when none was received. Quote it to support. */
  readonly requestId: string | null;
  /** HTTP attempts made before this error (0 when nothing was sent). */
  readonly attempts: number;

  constructor(init: SvcErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status ?? null;
    this.retryable = init.retryable ?? false;
    this.param = init.param ?? null;
    this.requestId = init.requestId ?? null;
    this.attempts = init.attempts ?? 0;
  }
}

/** The error object of a non-2xx answer, as the API sent it (fields it may add are kept). */
export type ApiErrorBody = {
  code: string;
  message: string;
  status: number;
  retryable: boolean;
  param: string | null;
  suggestion?: string;
  doc_url?: string;
  request_id?: string;
  [key: string]: unknown;
};

export type ApiErrorInit = {
  status: number;
  body: ApiErrorBody | null;
  headers: Headers;
  requestId: string | null;
  retryAfterMs: number | null;
  attempts: number;
};

/** A non-2xx answer from the API. Subclasses by HTTP status, then by code. */
export class APIError extends SvcError {
  declare readonly status: number;
  readonly suggestion: string | null;
  readonly docUrl: string | null;
  /** `Retry-After`, in milliseconds, when the API sent one. */
  readonly retryAfterMs: number | null;
  readonly headers: Headers;
  /** The `error` object of the body, or null when the body was not one. */
  readonly body: ApiErrorBody | null;

  constructor(init: ApiErrorInit) {
    const b = init.body;
    super({
      code: b?.code ?? fallbackCode(init.status),
      message: b?.message ?? `The API answered HTTP ${init.status} without an error object.`,
      status: init.status,
      retryable: b ? b.retryable === true : retryableStatus(init.status),
      param: b?.param ?? null,
      requestId: init.requestId ?? b?.request_id ?? null,
      attempts: init.attempts,
    });
    this.suggestion = b?.suggestion ?? null;
    this.docUrl = b?.doc_url ?? null;
    this.retryAfterMs = init.retryAfterMs;
    this.headers = init.headers;
    this.body = b;
  }
}

// By HTTP status: what an unknown code falls back to.
export class BadRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PaymentRequiredError extends APIError {}
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
export class MethodNotAllowedError extends APIError {}
export class ConflictError extends APIError {}
export class PayloadTooLargeError extends APIError {}
export class TooManyRequestsError extends APIError {}
export class ServerError extends APIError {}

// By documented code.
export class InvalidRequestError extends BadRequestError {}
export class TooManyNumbersError extends BadRequestError {}
export class TestNumberOnlyError extends BadRequestError {}
export class InvalidCursorError extends BadRequestError {}
export class UnauthorizedError extends AuthenticationError {}
export class InsufficientBalanceError extends PaymentRequiredError {}
export class CostLimitExceededError extends PaymentRequiredError {}
export class InsufficientScopeError extends PermissionDeniedError {}
export class ServiceDisabledError extends PermissionDeniedError {}
export class SandboxMagicOnlyError extends PermissionDeniedError {}
export class SuspectedEnumerationError extends PermissionDeniedError {}
export class IdempotencyKeyReusedError extends ConflictError {}
export class IdempotencyRequestInProgressError extends ConflictError {}
export class TestKeyExistsError extends ConflictError {}
export class RateLimitedError extends TooManyRequestsError {}
export class DailyCapReachedError extends TooManyRequestsError {}
export class SpendCapReachedError extends TooManyRequestsError {}
export class InternalError extends ServerError {}
export class TemporarilyUnavailableError extends ServerError {}

type ApiErrorClass = new (init: ApiErrorInit) => APIError;

/** One class per documented code (a compile error here means the contract gained a code). */
export const ERROR_CLASSES: { readonly [K in ErrorCode]: ApiErrorClass } = {
  invalid_request: InvalidRequestError,
  too_many_numbers: TooManyNumbersError,
  test_number_only: TestNumberOnlyError,
  invalid_cursor: InvalidCursorError,
  unauthorized: UnauthorizedError,
  insufficient_balance: InsufficientBalanceError,
  cost_limit_exceeded: CostLimitExceededError,
  insufficient_scope: InsufficientScopeError,
  service_disabled: ServiceDisabledError,
  sandbox_magic_only: SandboxMagicOnlyError,
  suspected_enumeration: SuspectedEnumerationError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  idempotency_request_in_progress: IdempotencyRequestInProgressError,
  test_key_exists: TestKeyExistsError,
  payload_too_large: PayloadTooLargeError,
  rate_limited: RateLimitedError,
  daily_cap_reached: DailyCapReachedError,
  spend_cap_reached: SpendCapReachedError,
  internal_error: InternalError,
  temporarily_unavailable: TemporarilyUnavailableError,
};

const STATUS_CLASSES: Record<number, ApiErrorClass> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: TooManyRequestsError,
};

/** The class for a code, else for the HTTP status (the spec's rule for unknown codes). */
export function apiErrorClass(code: string | undefined, status: number): ApiErrorClass {
  if (code && Object.hasOwn(ERROR_CLASSES, code)) return ERROR_CLASSES[code as ErrorCode];
  return STATUS_CLASSES[status] ?? (status >= 500 ? ServerError : APIError);
}

/** Without an error object (a proxy's 502, say): the documented code of that status, if one is unique. */
export function fallbackCode(status: number): string {
  const codes = (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c].status === status);
  return codes.length === 1 ? (codes[0] as string) : `http_${status}`;
}

/** Without an error object, only statuses that mean "not acted on, try again" are retried. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status === 502 || status === 503 || status === 504;
}

export class MissingApiKeyError extends SvcError {
  constructor() {
    super({ code: "missing_api_key", message: "No API key: pass `apiKey` to new Client() or set the SVC_API_KEY environment variable." });
  }
}

/** The request never got an answer: DNS, refused or reset connection, TLS, a body cut off. */
export class ConnectionError extends SvcError {
  constructor(message: string, init: { attempts: number; cause?: unknown; retryable?: boolean }) {
    super({ code: "connection_error", message, attempts: init.attempts, cause: init.cause, retryable: init.retryable ?? true });
  }
}

/** No answer within `timeoutMs` (one attempt) or `totalTimeoutMs` (the whole call). */
export class TimeoutError extends SvcError {
  constructor(message: string, init: { attempts: number; retryable?: boolean }) {
    super({ code: "timeout", message, attempts: init.attempts, retryable: init.retryable ?? true });
  }
}

/** A 2xx answer whose body is not the documented shape (or not JSON). */
export class InvalidResponseError extends SvcError {
  constructor(message: string, init: { status: number; requestId: string | null; attempts: number }) {
    super({ code: "invalid_response", message, status: init.status, requestId: init.requestId, attempts: init.attempts });
  }
}

/** The SDK refused a call before sending it. */
export class InvalidArgumentError extends SvcError {
  constructor(param: string, message: string) {
    super({ code: "invalid_argument", message, param });
  }
}
