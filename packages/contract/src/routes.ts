import { Type, type TSchema } from "@sinclair/typebox";
import type { Scope } from "@svc/domain";
import type { ErrorCode } from "./error-codes";
import { AccountSchema, LimitsSchema, UsageQuery, UsageSchema } from "./schemas/account";
import { HealthSchema, ServiceListSchema, TestKeyChallengeSchema, TestKeyRequest, TestKeySchema } from "./schemas/catalog";
import { DownloadQuery, EstimateSchema, JobRequest, JobSchema, ResultsPageSchema, ResultsQuery } from "./schemas/jobs";
import { LookupRequest, LookupSchema, WaitQuery } from "./schemas/lookup";
import { WebhookEndpointCreate, WebhookEndpointListSchema, WebhookEndpointSchema, WebhookEndpointUpdate, WebhookTestQueuedSchema } from "./schemas/webhooks";

export const ONE_MB = 1024 * 1024;

export type Deprecation = {
  /** When the operation was deprecated (sent as `Deprecation: @<unix seconds>`, RFC 9745). */
  deprecatedAt: Date;
  /** When it stops working (sent as `Sunset: <HTTP date>`, RFC 8594); at least 12 months later. */
  sunset: Date;
  /** Changelog entry naming the replacement (sent as `Link: <…>; rel="deprecation"`). */
  changelogUrl: string;
};

export type ResponseDef = { description: string; schema?: TSchema; contentType?: string; headers?: string[] };

export type RouteDef = {
  operationId: string;
  method: "get" | "post" | "patch" | "delete";
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** `none`: no key; `optional`: a key changes the answer; `key`: Bearer key required. */
  auth: "none" | "optional" | "key";
  /** Any one of these scopes grants access. */
  scopes?: Scope[];
  body?: TSchema;
  /** Other accepted body media types (besides application/json), described in prose. */
  extraBodyTypes?: Record<string, string>;
  bodyLimitBytes?: number;
  query?: TSchema;
  idempotent?: boolean;
  responses: Record<number, ResponseDef>;
  errors: ErrorCode[];
  deprecation?: Deprecation;
};

const AUTH_ERRORS: ErrorCode[] = ["unauthorized", "insufficient_scope", "rate_limited"];
const REQUEST_ERRORS: ErrorCode[] = ["invalid_request", "payload_too_large"];

const Empty = Type.Object({}, { additionalProperties: false });

/** The table as written, checked against RouteDef: each operation keeps its own id, path and schemas' types. */
function routeTable<const T extends RouteDef[]>(routes: T): T {
  return routes;
}

const OPERATIONS = routeTable([
  {
    operationId: "createLookup",
    method: "post",
    path: "/v1/lookup",
    tag: "Lookups",
    summary: "Create a lookup",
    description:
      "Checks up to 100 numbers and e-mail addresses in real time. Runs every requested check for every identifier of its input type. 200 when all answers arrived within `wait` seconds, else 202 with the pending lookup, a `Location` header and `next.poll_url`. Per-row problems (invalid, duplicate, suppressed, unsupported country) are reported in `results` and never fail the request.",
    auth: "key",
    scopes: ["lookup:write"],
    body: LookupRequest,
    query: Empty,
    idempotent: true,
    responses: {
      200: { description: "All checks completed.", schema: LookupSchema },
      202: { description: "Some checks still running; poll `next.poll_url`.", schema: LookupSchema, headers: ["Location"] },
    },
    errors: [...REQUEST_ERRORS, ...AUTH_ERRORS, "too_many_numbers", "test_number_only", "insufficient_balance", "cost_limit_exceeded", "service_disabled", "sandbox_magic_only", "suspected_enumeration", "idempotency_key_reused", "idempotency_request_in_progress", "daily_cap_reached", "spend_cap_reached", "temporarily_unavailable"],
  },
  {
    operationId: "getLookup",
    method: "get",
    path: "/v1/lookups/{id}",
    tag: "Lookups",
    summary: "Retrieve a lookup",
    description: "Reads a lookup, optionally waiting (`wait`) for it to complete. `input` is masked; `e164` and `email` are returned. A `lookup:write` key reads every lookup of its account (of the key's mode).",
    auth: "key",
    scopes: ["lookup:write"],
    query: WaitQuery,
    responses: { 200: { description: "The lookup, completed or pending.", schema: LookupSchema } },
    errors: [...AUTH_ERRORS, "invalid_request", "not_found"],
  },
  {
    operationId: "estimateJob",
    method: "post",
    path: "/v1/jobs/estimate",
    tag: "Bulk jobs",
    summary: "Estimate a job",
    description:
      "Counts a list and gives its maximum cost, for free. Same body as POST /v1/jobs (JSON or CSV upload). Stores nothing, calls no data source, charges nothing. Large bodies are read in the account's fair share of the service's capacity: while too many of the account's bulk requests are waiting, more are answered `503 temporarily_unavailable` with `Retry-After`.",
    auth: "key",
    scopes: ["jobs:write"],
    body: JobRequest,
    extraBodyTypes: { "multipart/form-data": "CSV upload, see POST /v1/jobs." },
    bodyLimitBytes: 4 * ONE_MB,
    query: Empty,
    responses: { 200: { description: "The estimate.", schema: EstimateSchema } },
    errors: [...REQUEST_ERRORS, ...AUTH_ERRORS, "too_many_numbers", "test_number_only", "cost_limit_exceeded", "service_disabled", "sandbox_magic_only", "suspected_enumeration", "temporarily_unavailable"],
  },
  {
    operationId: "createJob",
    method: "post",
    path: "/v1/jobs",
    tag: "Bulk jobs",
    summary: "Create a bulk job",
    description:
      "Starts a bulk job of up to 50,000 identifiers. JSON body, or `multipart/form-data` with a CSV file in part `file` (see [Bulk jobs and CSV](/docs/bulk-and-csv#uploading-a-csv-file-to-post-v1jobs-and-v1jobsestimate): header detection, `number`/`phone` and `email` columns, UTF-8 with or without BOM, quoted fields, CRLF; part `checks` as a comma-separated list). The maximum possible cost is reserved up front. Test-key jobs complete before the response. Like estimates, bulk bodies are read in the account's fair share of capacity (`503 temporarily_unavailable` with `Retry-After` while too many are waiting; nothing is charged).",
    auth: "key",
    scopes: ["jobs:write"],
    body: JobRequest,
    extraBodyTypes: { "multipart/form-data": "Parts: `file` (CSV), `checks` (comma-separated codes), optional `max_cost`, `webhook_endpoint_id`, `progress_events`." },
    bodyLimitBytes: 4 * ONE_MB,
    query: Empty,
    idempotent: true,
    responses: { 201: { description: "Job created; includes `estimate`.", schema: JobSchema, headers: ["Location"] } },
    errors: [...REQUEST_ERRORS, ...AUTH_ERRORS, "too_many_numbers", "test_number_only", "insufficient_balance", "cost_limit_exceeded", "service_disabled", "sandbox_magic_only", "suspected_enumeration", "idempotency_key_reused", "idempotency_request_in_progress", "daily_cap_reached", "spend_cap_reached", "temporarily_unavailable"],
  },
  {
    operationId: "getJob",
    method: "get",
    path: "/v1/jobs/{id}",
    tag: "Bulk jobs",
    summary: "Retrieve a job",
    description: "Reads a job's status, progress and cost, optionally waiting (`wait`) until it has finished.",
    auth: "key",
    scopes: ["jobs:read", "jobs:read_all"],
    query: WaitQuery,
    responses: { 200: { description: "The job.", schema: JobSchema } },
    errors: [...AUTH_ERRORS, "invalid_request", "not_found"],
  },
  {
    operationId: "deleteJob",
    method: "delete",
    path: "/v1/jobs/{id}",
    tag: "Bulk jobs",
    summary: "Cancel or purge a job",
    description: "Cancels a running job, or purges a finished job's results. A cancelled job whose rows in flight are still finishing (`finished_at` null) is answered unchanged: delete again once `finished_at` is set.",
    auth: "key",
    scopes: ["jobs:write"],
    query: Empty,
    responses: { 200: { description: "The job afterwards.", schema: JobSchema } },
    errors: [...AUTH_ERRORS, "not_found"],
  },
  {
    operationId: "listJobResults",
    method: "get",
    path: "/v1/jobs/{id}/results",
    tag: "Bulk jobs",
    summary: "List a job's results",
    description: "Pages through a job's result items in input order; filter by `service`, `registered` and `status`, and pass `next_cursor` as `after` for the next page.",
    auth: "key",
    scopes: ["jobs:read", "jobs:read_all"],
    query: ResultsQuery,
    responses: { 200: { description: "A page of result items.", schema: ResultsPageSchema } },
    errors: [...AUTH_ERRORS, "invalid_request", "invalid_cursor", "not_found"],
  },
  {
    operationId: "downloadJobResults",
    method: "get",
    path: "/v1/jobs/{id}/download",
    tag: "Bulk jobs",
    summary: "Download a job's results",
    description: "Downloads all results of a job as one CSV or NDJSON file (`format`), streamed.",
    auth: "key",
    scopes: ["jobs:read", "jobs:read_all"],
    query: DownloadQuery,
    responses: {
      200: { description: "The result file, streamed; `Content-Disposition: attachment`.", contentType: "text/csv", headers: ["Content-Disposition"] },
    },
    errors: [...AUTH_ERRORS, "invalid_request", "not_found"],
  },
  {
    operationId: "getAccount",
    method: "get",
    path: "/v1/account",
    tag: "Account",
    summary: "Retrieve the account",
    description: "Balance, reserved amount and today's usage (UTC day) of the key's account.",
    auth: "key",
    scopes: ["account:read"],
    query: Empty,
    responses: { 200: { description: "The account.", schema: AccountSchema } },
    errors: AUTH_ERRORS,
  },
  {
    operationId: "getLimits",
    method: "get",
    path: "/v1/limits",
    tag: "Account",
    summary: "Retrieve limits",
    description: "Request rate, request sizes and daily caps that apply to the calling key. Daily counters reset at 00:00 UTC.",
    auth: "key",
    scopes: ["account:read"],
    query: Empty,
    responses: { 200: { description: "The limits that apply to the calling key.", schema: LimitsSchema } },
    errors: AUTH_ERRORS,
  },
  {
    operationId: "getUsage",
    method: "get",
    path: "/v1/usage",
    tag: "Account",
    summary: "Retrieve usage",
    description: "Usage per UTC day or per check (`group_by`) for the key's mode.",
    auth: "key",
    scopes: ["account:read"],
    query: UsageQuery,
    responses: { 200: { description: "Usage figures.", schema: UsageSchema } },
    errors: [...AUTH_ERRORS, "invalid_request"],
  },
  {
    operationId: "listWebhookEndpoints",
    method: "get",
    path: "/v1/webhook_endpoints",
    tag: "Webhook endpoints",
    summary: "List webhook endpoints",
    description: "Lists the account's webhook endpoints of the key's mode.",
    auth: "key",
    scopes: ["webhooks:manage"],
    query: Empty,
    responses: { 200: { description: "Endpoints that are not deleted.", schema: WebhookEndpointListSchema } },
    errors: AUTH_ERRORS,
  },
  {
    operationId: "createWebhookEndpoint",
    method: "post",
    path: "/v1/webhook_endpoints",
    tag: "Webhook endpoints",
    summary: "Create a webhook endpoint",
    description: "Creates a webhook endpoint, `pending_verification` until it answers the signed `webhook.verification` event. The signing `secret` is shown only in this response.",
    auth: "key",
    scopes: ["webhooks:manage"],
    body: WebhookEndpointCreate,
    query: Empty,
    responses: { 201: { description: "Created; `secret` is shown only here.", schema: WebhookEndpointSchema } },
    errors: [...REQUEST_ERRORS, ...AUTH_ERRORS],
  },
  {
    operationId: "updateWebhookEndpoint",
    method: "patch",
    path: "/v1/webhook_endpoints/{id}",
    tag: "Webhook endpoints",
    summary: "Update a webhook endpoint",
    description: "Changes an endpoint's URL, its events, or both. A new URL is verified again.",
    auth: "key",
    scopes: ["webhooks:manage"],
    body: WebhookEndpointUpdate,
    query: Empty,
    responses: { 200: { description: "The updated endpoint.", schema: WebhookEndpointSchema } },
    errors: [...REQUEST_ERRORS, ...AUTH_ERRORS, "not_found"],
  },
  {
    operationId: "deleteWebhookEndpoint",
    method: "delete",
    path: "/v1/webhook_endpoints/{id}",
    tag: "Webhook endpoints",
    summary: "Delete a webhook endpoint",
    description: "Deletes an endpoint; nothing is delivered to it afterwards.",
    auth: "key",
    scopes: ["webhooks:manage"],
    query: Empty,
    responses: { 204: { description: "Deleted." } },
    errors: [...AUTH_ERRORS, "not_found"],
  },
  {
    operationId: "testWebhookEndpoint",
    method: "post",
    path: "/v1/webhook_endpoints/{id}/test",
    tag: "Webhook endpoints",
    summary: "Send a test event",
    description: "Queues a signed `webhook.test` event to the endpoint, delivered even before it is verified.",
    auth: "key",
    scopes: ["webhooks:manage"],
    query: Empty,
    responses: { 202: { description: "Queued.", schema: WebhookTestQueuedSchema } },
    errors: [...AUTH_ERRORS, "not_found"],
  },
  {
    operationId: "listServices",
    method: "get",
    path: "/v1/services",
    tag: "Catalog",
    summary: "List checks",
    description: "The checks this API offers, each with its input type, countries, attributes and prices by mode; with a key, the account's own prices and availability.",
    auth: "optional",
    query: Empty,
    responses: { 200: { description: "The catalog.", schema: ServiceListSchema } },
    errors: ["unauthorized", "rate_limited"],
  },
  {
    operationId: "getTestKeyChallenge",
    method: "get",
    path: "/v1/test-keys/challenge",
    tag: "Keys",
    summary: "Get a test-key challenge",
    description: "Issues a proof-of-work challenge for POST /v1/test-keys. Find a `nonce` (any string of 1-64 characters [A-Za-z0-9]) such that SHA-256 of `challenge + \":\" + nonce` starts with `difficulty` zero bits; send `challenge + \":\" + nonce` as `challenge_token`. Each challenge is single-use and expires after 10 minutes. The page at /get-test-key does this in the browser.",
    auth: "none",
    query: Empty,
    responses: { 200: { description: "A challenge.", schema: TestKeyChallengeSchema } },
    errors: ["rate_limited"],
  },
  {
    operationId: "createTestKey",
    method: "post",
    path: "/v1/test-keys",
    tag: "Keys",
    summary: "Create a test key",
    description: "Gives a personal test key; no authentication. At most 3 keys per e-mail address per 30 days, and 3 requests per network per UTC day whatever the result (IPv6 counted per /64). The request also asks for live access: the operator lists and answers these requests (`npm run admin -- live-access list`, `… approve`, `… decline`).",
    auth: "none",
    body: TestKeyRequest,
    query: Empty,
    responses: { 201: { description: "The key, shown once.", schema: TestKeySchema } },
    errors: [...REQUEST_ERRORS, "test_key_exists", "rate_limited"],
  },
  {
    operationId: "getHealth",
    method: "get",
    path: "/v1/health",
    tag: "System",
    summary: "Check health",
    description: "200 when the API can reach its database; otherwise 503 with `Retry-After`.",
    auth: "none",
    // Monitors add cache-busting parameters; the health check ignores its query string.
    query: Type.Object({}, { additionalProperties: true }),
    responses: { 200: { description: "Healthy.", schema: HealthSchema }, 503: { description: "The database is unreachable (error object, code temporarily_unavailable).", headers: ["Retry-After"] } },
    errors: ["temporarily_unavailable"],
  },
  {
    operationId: "getOpenApi",
    method: "get",
    path: "/v1/openapi.json",
    tag: "System",
    summary: "Get the OpenAPI document",
    description: "This OpenAPI 3.1 document.",
    auth: "none",
    query: Empty,
    responses: { 200: { description: "The API description; `info.version` is 1.x.y." } },
    errors: [],
  },
]);

/**
 * Every operation of API v1. The gateway mounts its handlers from this table and
 * the OpenAPI document is generated from it, so the two cannot drift apart.
 */
export const ROUTES: RouteDef[] = OPERATIONS;

/** One operation of the table with its own types (literal id and path, its schemas' TypeBox types). */
export type Operation = (typeof OPERATIONS)[number];
export type OperationId = Operation["operationId"];
/** The operation `Id`: the gateway types its handler's body, query, path parameters and replies from it (Static<> of its schemas). */
export type OperationById<Id extends OperationId> = Extract<Operation, { operationId: Id }>;
export type { Static } from "@sinclair/typebox";

export function routeById(operationId: string): RouteDef {
  const route = ROUTES.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`unknown operation ${operationId}`);
  return route;
}
