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
    summary: "Check up to 100 numbers and e-mail addresses in real time",
    description:
      "Runs every requested check for every identifier of its input type. 200 when all answers arrived within `wait` seconds, else 202 with the pending lookup, a `Location` header and `next.poll_url`. Per-row problems (invalid, duplicate, suppressed, unsupported country) are reported in `results` and never fail the request.",
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
    summary: "Read a lookup, optionally waiting for it to complete",
    description: "`input` is masked; `e164` and `email` are returned. A `lookup:write` key reads every lookup of its account (of the key's mode).",
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
    summary: "Count a list and give its maximum cost, for free",
    description:
      "Same body as POST /v1/jobs (JSON or CSV upload). Stores nothing, calls no data source, charges nothing. Large bodies are read in the account's fair share of the service's capacity: while too many of the account's bulk requests are waiting, more are answered `503 temporarily_unavailable` with `Retry-After`.",
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
    summary: "Start a bulk job of up to 50,000 identifiers",
    description:
      "JSON body, or `multipart/form-data` with a CSV file in part `file` (see docs/csv-upload.md: header detection, `number`/`phone` and `email` columns, UTF-8 with or without BOM, quoted fields, CRLF; part `checks` as a comma-separated list). The maximum possible cost is reserved up front. Test-key jobs complete before the response. Like estimates, bulk bodies are read in the account's fair share of capacity (`503 temporarily_unavailable` with `Retry-After` while too many are waiting; nothing is charged).",
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
    summary: "Read a job's status, progress and cost, optionally waiting until it has finished",
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
    summary: "Cancel a running job, or purge a finished job's results",
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
    summary: "Page through a job's result items in input order",
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
    summary: "Download all results as CSV or NDJSON",
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
    summary: "Balance, reserved amount and today's usage (UTC)",
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
    summary: "Request rate, request sizes and daily caps",
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
    summary: "Usage per UTC day or per check for the key's mode",
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
    tag: "Webhooks",
    summary: "List the account's webhook endpoints of the key's mode",
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
    tag: "Webhooks",
    summary: "Create a webhook endpoint (pending verification)",
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
    tag: "Webhooks",
    summary: "Change an endpoint's URL and/or events",
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
    tag: "Webhooks",
    summary: "Delete an endpoint; nothing is delivered to it afterwards",
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
    tag: "Webhooks",
    summary: "Queue a signed webhook.test event (delivered even before verification)",
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
    summary: "The checks, with prices by mode; with a key, the account's own",
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
    summary: "Issue a proof-of-work challenge for POST /v1/test-keys",
    description: "Find a `nonce` (any string of 1-64 characters [A-Za-z0-9]) such that SHA-256 of `challenge + \":\" + nonce` starts with `difficulty` zero bits; send `challenge + \":\" + nonce` as `challenge_token`. Each challenge is single-use and expires after 10 minutes. The page at /get-test-key does this in the browser.",
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
    summary: "Get a personal test key (no authentication)",
    description: "At most 3 keys per e-mail address per 30 days, and 3 requests per network per UTC day whatever the result (IPv6 counted per /64). The request also asks for live access, reviewed by hand.",
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
    summary: "200 when the API can reach its database; otherwise 503 with Retry-After",
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
    summary: "This OpenAPI 3.1 document",
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
