/**
 * The one door to the contract package. Everything the SDK knows about the API
 * (paths, methods, which POSTs take an Idempotency-Key, response schemas, error
 * codes, event payloads) comes from `@svc/contract`, the schemas the gateway
 * validates with. The published build bundles what is used from here (see
 * scripts/build.mjs), so consumers never install the server's packages.
 */
export {
  AccountSchema,
  CHECK_NAMES,
  CheckResultSchema,
  ERROR_CODES,
  EVENT_PAYLOADS,
  EVENT_TYPES,
  EstimateSchema,
  HealthSchema,
  JobRequest,
  JobSchema,
  LIMITS,
  LimitsSchema,
  LookupRequest,
  LookupSchema,
  MoneySchema,
  ProgressSchema,
  ResultRowSchema,
  ResultsPageSchema,
  ROUTES,
  SUBSCRIBABLE_EVENTS,
  ServiceListSchema,
  ServiceSchema,
  TestKeyChallengeSchema,
  TestKeyRequest,
  TestKeySchema,
  UsageSchema,
  WebhookEndpointCreate,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdate,
  WebhookTestQueuedSchema,
} from "@svc/contract";
export type { ErrorCode, RouteDef } from "@svc/contract";
