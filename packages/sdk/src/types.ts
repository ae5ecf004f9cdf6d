import type { Static } from "@sinclair/typebox";
import type {
  AccountSchema,
  CheckResultSchema,
  EVENT_PAYLOADS,
  EVENT_TYPES,
  ErrorCode,
  EstimateSchema,
  HealthSchema,
  JobRequest,
  JobSchema,
  LimitsSchema,
  LookupRequest,
  LookupSchema,
  MoneySchema,
  ProgressSchema,
  ResultRowSchema,
  ResultsPageSchema,
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
} from "./contract";

/**
 * API objects, derived from the contract's TypeBox schemas (never written by hand).
 * Enumerations are typed `string`: the API may add values within v1, and an
 * unknown value must be treated as non-conclusive, not rejected.
 */

/** `{ amount: "12.50", currency: "USD" }`: amounts are decimal strings, never floats. */
export type Money = Static<typeof MoneySchema>;
export type CheckResult = Static<typeof CheckResultSchema>;
export type ResultRow = Static<typeof ResultRowSchema>;

export type LookupCreateParams = Static<typeof LookupRequest>;
export type Lookup = Static<typeof LookupSchema>;

/** JSON body of POST /v1/jobs and /v1/jobs/estimate. */
export type JobParams = Static<typeof JobRequest>;
export type Estimate = Static<typeof EstimateSchema>;
export type Progress = Static<typeof ProgressSchema>;
export type Job = Static<typeof JobSchema>;
export type ResultsPage = Static<typeof ResultsPageSchema>;

export type Account = Static<typeof AccountSchema>;
export type Limits = Static<typeof LimitsSchema>;
export type Usage = Static<typeof UsageSchema>;

export type Service = Static<typeof ServiceSchema>;
export type ServiceList = Static<typeof ServiceListSchema>;
export type Health = Static<typeof HealthSchema>;

export type WebhookEndpointCreateParams = Static<typeof WebhookEndpointCreate>;
export type WebhookEndpointUpdateParams = Static<typeof WebhookEndpointUpdate>;
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookEndpointList = Static<typeof WebhookEndpointListSchema>;
export type WebhookTestQueued = Static<typeof WebhookTestQueuedSchema>;

export type TestKeyChallenge = Static<typeof TestKeyChallengeSchema>;
export type TestKeyCreateParams = Static<typeof TestKeyRequest>;
export type TestKey = Static<typeof TestKeySchema>;

/** Error codes the API documents today. New codes may appear: branch on them, fall back to the HTTP status. */
export type ApiErrorCode = ErrorCode;

/** Event types documented today. Other types may arrive; ignore them and answer 2xx. */
export type KnownEventType = (typeof EVENT_TYPES)[number];
type EventOf<K extends KnownEventType> = Static<(typeof EVENT_PAYLOADS)[K]>;
export type LookupCompletedEvent = EventOf<"lookup.completed">;
export type JobCompletedEvent = EventOf<"job.completed">;
export type JobFailedEvent = EventOf<"job.failed">;
export type JobProgressEvent = EventOf<"job.progress">;
export type BalanceLowEvent = EventOf<"balance.low">;
export type LimitsCapReachedEvent = EventOf<"limits.cap_reached">;
export type WebhookVerificationEvent = EventOf<"webhook.verification">;
export type WebhookTestEvent = EventOf<"webhook.test">;
export type KnownWebhookEvent = { [K in KnownEventType]: EventOf<K> }[KnownEventType];

/** An event of a type this version of the SDK does not know, passed through untouched. */
export interface UnknownWebhookEvent {
  type: string;
  id: string;
  created_at: string;
  livemode?: boolean;
  data: Record<string, unknown>;
  [key: string]: unknown;
}

/** What `webhooks.verify` returns: narrow it with `isEventType(event, "job.completed")`. */
export type WebhookEvent = KnownWebhookEvent | UnknownWebhookEvent;
