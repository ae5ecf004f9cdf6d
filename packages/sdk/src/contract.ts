/**
 * The one door to the contract package. Everything the SDK knows about the API
 * (paths, methods, which POSTs take an Idempotency-Key, response schemas, error
 * codes, event payloads) comes from `@svc/contract`, the schemas the gateway
 * validates with. The published build bundles what is used from here (see
 * scripts/build.mjs), so consumers never install the server's packages.
 */
export {
  AMOUNT_PATTERN,
  API_KEY_MODES,
  API_KEY_PATTERN,
  API_KEY_PREFIX_PATTERN,
  API_KEY_PREFIX_SOURCE,
  AccountSchema,
  CHECK_NAMES,
  CheckResultSchema,
  ERROR_CODES,
  EVENT_PAYLOADS,
  EVENT_TYPES,
  EstimateSchema,
  HealthSchema,
  IdParam,
  JobRequest,
  JobSchema,
  LIMITS,
  LimitsSchema,
  LookupRequest,
  LookupSchema,
  MICROS_PER_UNIT,
  MoneySchema,
  ProgressSchema,
  ResultRowSchema,
  ResultsPageSchema,
  ResultsQuery,
  ROUTES,
  SUBSCRIBABLE_EVENTS,
  ServiceListSchema,
  ServiceSchema,
  TestKeyChallengeSchema,
  TestKeyRequest,
  TestKeySchema,
  UsageSchema,
  WaitQuery,
  WebhookEndpointCreate,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdate,
  WebhookTestQueuedSchema,
  formatAmount,
  parseAmount,
} from "@svc/contract";
export type { ErrorCode, RouteDef } from "@svc/contract";
