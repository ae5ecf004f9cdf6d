/**
 * @svc/sdk: the TypeScript client of the phone and e-mail validation API (v1).
 *
 * One `Client` with a namespace per resource, errors by code, webhook verification,
 * and the API's own types and schemas (from the contract the gateway validates with).
 */
export { Client, API_KEY_ENV, BASE_URL_ENV, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, type ClientOptions, type RawRequest } from "./client";
export type { ApiResponse, FetchLike, IdempotentRequestOptions, Logger, RequestOptions } from "./transport";
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryOptions } from "./retry";
export { SDK_VERSION } from "./version";
export {
  ALLOW_INSECURE_HTTP_ENV,
  API_KEY_PATTERN,
  API_KEY_PREFIX_PATTERN,
  apiKeyMode,
  createRedactor,
  isLoopbackHost,
  parseAllowInsecureHttp,
  redactSecrets,
  type ApiKeyMode,
} from "./safety";
export { AMOUNT_PATTERN, MICROS_PER_UNIT, formatAmount, parseAmount } from "./money";
export { priceModeOf, quoteLookup, type CostQuote, type LookupQuoteRequest, type PriceMode } from "./quote";

export {
  SvcError,
  APIError,
  BadRequestError,
  AuthenticationError,
  PaymentRequiredError,
  PermissionDeniedError,
  NotFoundError,
  MethodNotAllowedError,
  ConflictError,
  PayloadTooLargeError,
  TooManyRequestsError,
  ServerError,
  InvalidRequestError,
  TooManyNumbersError,
  TestNumberOnlyError,
  InvalidCursorError,
  UnauthorizedError,
  InsufficientBalanceError,
  CostLimitExceededError,
  InsufficientScopeError,
  ServiceDisabledError,
  SandboxMagicOnlyError,
  SuspectedEnumerationError,
  IdempotencyKeyReusedError,
  IdempotencyRequestInProgressError,
  TestKeyExistsError,
  RateLimitedError,
  DailyCapReachedError,
  SpendCapReachedError,
  InternalError,
  TemporarilyUnavailableError,
  MissingApiKeyError,
  ConnectionError,
  TimeoutError,
  InvalidResponseError,
  InvalidArgumentError,
  ERROR_CLASSES,
  type ApiErrorBody,
  type ClientErrorCode,
  type SvcErrorCode,
} from "./errors";

export { Lookups, isLookupFinished, type LookupGetParams, type WaitForLookupOptions } from "./resources/lookups";
export {
  Jobs,
  ResultsIterable,
  isJobFinished,
  type CsvJobParams,
  type DownloadFormat,
  type DownloadOptions,
  type DownloadStream,
  type JobCreateParams,
  type JobGetParams,
  type ResultsFilters,
  type ResultsPageParams,
  type WaitForJobOptions,
} from "./resources/jobs";
export { AccountResource, LimitsResource, UsageResource, type UsageParams } from "./resources/account";
export { Services, HealthResource, TestKeys } from "./resources/catalog";
export { WebhookEndpoints } from "./resources/webhook-endpoints";
export type { DownloadResult, DownloadTarget, NodeWritableLike } from "./download";
export { MAX_BUFFERED_UPLOAD_BYTES, type FileInput } from "./files";

export {
  webhooks,
  verify as verifyWebhook,
  sign as signWebhook,
  isEventType,
  isKnownEvent,
  WebhookVerificationError,
  DEFAULT_TOLERANCE_SECONDS,
  type VerifyOptions,
  type WebhookBody,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from "./webhooks";

export type * from "./types";

import {
  CHECK_NAMES as CONTRACT_CHECK_NAMES,
  ERROR_CODES as CONTRACT_ERROR_CODES,
  EVENT_TYPES as CONTRACT_EVENT_TYPES,
  JobRequest,
  LIMITS as CONTRACT_LIMITS,
  LookupRequest,
  SUBSCRIBABLE_EVENTS as CONTRACT_SUBSCRIBABLE_EVENTS,
  UsageSchema,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  AccountSchema,
  EstimateSchema,
  IdParam,
  JobSchema,
  LimitsSchema,
  LookupSchema,
  ResultsPageSchema,
  ResultsQuery,
  ServiceListSchema,
  WaitQuery,
  WebhookEndpointSchema,
} from "./contract";

/** Check codes and aliases the API accepts today (it may add more). */
export const CHECK_NAMES: readonly string[] = CONTRACT_CHECK_NAMES;
/** Documented error codes with their HTTP status, `retryable` and default message. */
export const ERROR_CODES = CONTRACT_ERROR_CODES;
/** Documented webhook event types; `SUBSCRIBABLE_EVENTS` are those an endpoint may subscribe to. */
export const EVENT_TYPES = CONTRACT_EVENT_TYPES;
export const SUBSCRIBABLE_EVENTS = CONTRACT_SUBSCRIBABLE_EVENTS;
/** The documented limits of API v1 (they may be raised, never lowered, within v1). */
export const LIMITS = CONTRACT_LIMITS;

/**
 * JSON Schemas of request bodies, query strings and API objects, the ones the gateway
 * validates with (for tool input schemas, forms, or your own checks).
 */
export const schemas = {
  LookupRequest,
  JobRequest,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  /** `?wait=` of GET /v1/lookups/{id} and /v1/jobs/{id}. */
  WaitQuery,
  /** Filters and paging of GET /v1/jobs/{id}/results. */
  ResultsQuery,
  /** An object id in a path (`lkp_…`, `job_…`, `we_…`). */
  IdParam,
  Lookup: LookupSchema,
  Job: JobSchema,
  Estimate: EstimateSchema,
  ResultsPage: ResultsPageSchema,
  Account: AccountSchema,
  Limits: LimitsSchema,
  Usage: UsageSchema,
  ServiceList: ServiceListSchema,
  WebhookEndpoint: WebhookEndpointSchema,
} as const;
