import type { TSchema } from "@sinclair/typebox";
import { CHECK_CODES, DEFAULT_SCOPES, PUBLIC_SANDBOX_KEY, SANDBOX_SCOPES, SCOPES, type Scope } from "@svc/domain";
import { applyExamples } from "./examples/apply";
import { ERROR_CODE_LIST, ERROR_CODES, ERROR_GUIDANCE } from "./error-codes";
import { ROUTES, type RouteDef } from "./routes";
import { ServiceSchema } from "./schemas/catalog";
import { CHECK_ATTRIBUTES } from "./schemas/checks";
import { CheckResultSchema, ErrorSchema, MoneySchema, ResultRowSchema } from "./schemas/common";
import { ProgressSchema } from "./schemas/jobs";
import { EVENT_PAYLOADS } from "./schemas/webhooks";

/** Bumped on every additive change to v1 (minor) or fix (patch); never a breaking change. */
export const API_VERSION = "1.1.0";

type Json = Record<string, unknown>;

/**
 * Converts a TypeBox schema for OpenAPI: every nested schema with an `$id` becomes a
 * component and a `$ref`, and TypeBox's bare `$ref: "Money"` points at components.
 */
function convert(value: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, components));
  if (!value || typeof value !== "object") return value;
  const src = value as Json;
  if (typeof src.$id === "string") return schemaRef(src as TSchema, components);
  return convertBody(src, components);
}

function convertBody(src: Json, components: Record<string, unknown>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === "$id") continue;
    if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) out.$ref = `#/components/schemas/${v}`;
    else out[k] = convert(v, components);
  }
  return out;
}

function schemaRef(schema: TSchema, components: Record<string, unknown>): unknown {
  const id = schema.$id;
  if (typeof id !== "string") return convertBody(schema as Json, components);
  if (!(id in components)) {
    components[id] = {}; // reserve first: schemas may refer to themselves
    components[id] = convertBody(schema as Json, components);
  }
  return { $ref: `#/components/schemas/${id}` };
}

/** Response headers, declared once under components.headers and referred to by name. */
const HEADERS: Record<string, Json> = {
  "X-Request-Id": { description: "This request's id (`req_…`); error bodies repeat it as `error.request_id`. Quote it when asking for help.", schema: { type: "string", pattern: "^req_" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
  Location: { description: "URL of the created or pending object.", schema: { type: "string", format: "uri" } },
  "Content-Disposition": { description: "`attachment; filename=…`", schema: { type: "string" } },
  "Idempotent-Replayed": { description: "`true` when this is a stored response replayed for a repeated Idempotency-Key.", schema: { type: "string" } },
};
const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** The error codes that the gateway answers with `Retry-After` (every 429 and 503, and the in-progress 409). */
const RETRY_AFTER_CODES = new Set<string>(ERROR_CODE_LIST.filter((code) => "retryAfter" in ERROR_CODES[code]));

function operation(route: RouteDef, components: Record<string, unknown>): Json {
  const parameters: Json[] = [];
  for (const m of route.path.matchAll(/\{(\w+)\}/g)) {
    parameters.push({ name: m[1], in: "path", required: true, schema: { type: "string" }, description: "Object id (`lkp_…`, `job_…` or `we_…`)." });
  }
  const query = route.query as (TSchema & { properties?: Record<string, TSchema>; required?: string[] }) | undefined;
  for (const [name, prop] of Object.entries(query?.properties ?? {})) {
    parameters.push({ name, in: "query", required: (query?.required ?? []).includes(name), schema: convert(prop, components), description: prop.description });
  }
  if (route.idempotent) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
      description: "1-255 printable ASCII characters, scoped to the account. A retry with the same key and body within 24 hours replays the stored response with `Idempotent-Replayed: true`; a different body gives 409 idempotency_key_reused; while the first request runs, 409 idempotency_request_in_progress. Retryable error responses are not stored.",
    });
  }
  const responses: Json = {};
  for (const [status, def] of Object.entries(route.responses)) {
    const r: Json = { description: def.description };
    const headers: Json = { "X-Request-Id": headerRef("X-Request-Id") };
    for (const h of def.headers ?? []) {
      if (!HEADERS[h]) throw new Error(`${route.operationId}: undocumented response header ${h}`);
      headers[h] = headerRef(h);
    }
    if (route.idempotent) headers["Idempotent-Replayed"] = headerRef("Idempotent-Replayed");
    r.headers = headers;
    if (def.schema) r.content = { [def.contentType ?? "application/json"]: { schema: schemaRef(def.schema, components) } };
    else if (def.contentType) r.content = { [def.contentType]: { schema: { type: "string" } } };
    if (route.operationId === "downloadJobResults") r.content = { "text/csv": { schema: { type: "string" } }, "application/x-ndjson": { schema: { type: "string" } } };
    responses[status] = r;
  }
  const byStatus = new Map<number, string[]>();
  for (const code of route.errors) {
    const s = ERROR_CODES[code].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  }
  for (const [status, codes] of byStatus) {
    const existing = responses[String(status)] as Json | undefined;
    const retryAfter = codes.filter((c) => RETRY_AFTER_CODES.has(c));
    if (existing) {
      if (retryAfter.length > 0) (existing.headers as Json)["Retry-After"] = headerRef("Retry-After");
      continue;
    }
    const headers: Json = { "X-Request-Id": headerRef("X-Request-Id") };
    if (retryAfter.length === codes.length) headers["Retry-After"] = headerRef("Retry-After");
    else if (retryAfter.length > 0) headers["Retry-After"] = { ...HEADERS["Retry-After"], description: `Seconds to wait before retrying; sent with ${retryAfter.map((c) => `\`${c}\``).join(", ")}.` };
    responses[String(status)] = {
      description: `Error object; code ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      headers,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  }
  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters,
    responses,
  };
  const scopeText = route.scopes ? ` Required scope: ${route.scopes.map((s) => `\`${s}\``).join(" or ")}.` : "";
  op.description = `${route.description ?? route.summary}.${scopeText}`.replace(/\.\./g, ".");
  if (route.auth === "none") op.security = [];
  else if (route.auth === "optional") op.security = [{}, { bearerKey: [] }];
  else op.security = [{ bearerKey: [] }];
  if (route.body) {
    const content: Json = { "application/json": { schema: schemaRef(route.body, components) } };
    for (const [type, text] of Object.entries(route.extraBodyTypes ?? {})) content[type] = { schema: { type: "object", description: text } };
    op.requestBody = { required: true, content };
  }
  if (route.deprecation) op.deprecated = true;
  return op;
}

/** Shown by the reference at /docs beside each group of operations. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Lookups: "Real-time checks of up to 100 numbers and e-mail addresses, answered within `wait` seconds or polled.",
  "Bulk jobs": "Up to 50,000 identifiers per job: estimate, create (JSON or CSV), follow progress, page through or download results.",
  Account: "Balance, limits and usage of the account the key belongs to.",
  "Webhook endpoints": "Where signed events are delivered: create, verify, test and delete endpoints. The events themselves and their payloads are listed under Webhooks.",
  Catalog: "The checks this API offers, with prices and coverage.",
  Keys: "Personal test keys for people who solve a proof-of-work challenge.",
  System: "Health and this document.",
};

/** The spec leaves this keyword to us: an open list of known values (Zalando's `x-extensible-enum`). */
export const OPEN_ENUM_KEYWORD = "x-extensible-enum";

/**
 * What the API sends has open enums. The versioning rules make new error codes, new
 * enum values (statuses, reasons, attributes) and new check codes additive, and tell
 * clients to treat an unknown value as unknown; a closed `enum` in a response would
 * make a generated client reject such a response. So every string `enum` reached from
 * a response or a webhook payload becomes `type: string` with the known values kept
 * in `x-extensible-enum` and in the description. Request schemas and parameters keep
 * `enum`: the gateway refuses values it does not know. (docs/api-decisions.md)
 */
function openEnums(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(openEnums);
  if (!value || typeof value !== "object") return value;
  const src = value as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) out[k] = k === "enum" ? v : openEnums(v);
  const closed = Array.isArray(src.enum) && src.enum.length > 0 && src.enum.every((v) => typeof v === "string") && (src.type === undefined || src.type === "string");
  const values = closed ? (src.enum as string[]) : (src[OPEN_ENUM_KEYWORD] as string[] | undefined);
  if (!Array.isArray(values)) return out;
  // Already open in its TypeBox source (the error code) or opened here: either way the
  // known values are listed where a person reads them, too.
  delete out.enum;
  out.type = "string";
  out[OPEN_ENUM_KEYWORD] = values;
  const known = `Known values: ${values.map((v) => `\`${v}\``).join(", ")}.${closed ? " New values may be added within v1; treat an unknown one as unknown." : ""}`;
  out.description = typeof src.description === "string" ? `${src.description} ${known}` : known;
  return out;
}

/** Names of the components that `roots` reach through `$ref`, directly or through other components. */
function reachableComponents(roots: unknown, components: Record<string, unknown>): Set<string> {
  const seen = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value as Json)) {
      const name = k === "$ref" && typeof v === "string" ? /^#\/components\/schemas\/(.+)$/.exec(v)?.[1] : undefined;
      if (name !== undefined) {
        if (!seen.has(name)) {
          seen.add(name);
          walk(components[name]);
        }
      } else walk(v);
    }
  };
  walk(roots);
  return seen;
}

/** Opens the enums of response bodies, webhook payloads and every component they reach. */
function openResponseEnums(paths: Json, webhooks: Json, components: Record<string, unknown>): void {
  const sent: unknown[] = [];
  for (const item of Object.values(paths) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      for (const response of Object.values(op.responses as Json) as Json[]) {
        for (const media of Object.values((response.content ?? {}) as Json) as Json[]) {
          media.schema = openEnums(media.schema);
          sent.push(media.schema);
        }
      }
    }
  }
  for (const item of Object.values(webhooks) as Json[]) {
    const media = ((item.post as Json).requestBody as Json).content as Json;
    for (const m of Object.values(media) as Json[]) {
      m.schema = openEnums(m.schema);
      sent.push(m.schema);
    }
  }
  for (const name of reachableComponents(sent, components)) components[name] = openEnums(components[name]);
}

/** What each scope grants, in words; the operations it opens are listed from ROUTES. */
const SCOPE_GRANTS: Record<Scope, string> = {
  "lookup:write": "real-time lookups, and reading every lookup of the account (of the key's mode)",
  "jobs:write": "estimating, creating and cancelling bulk jobs (and purging a finished job's results)",
  "jobs:read": "reading the jobs this key created: status, result pages, downloads",
  "jobs:read_all": "reading every job of the account in the key's mode, not only the key's own",
  "account:read": "balance, limits and usage",
  "webhooks:manage": "creating, changing, testing, listing and deleting webhook endpoints",
};

/** The `bearerKey` scheme's text: the header, how to get a key, the kinds of key and every scope. */
function authDescription(baseUrl: string): string {
  const scopeRows = SCOPES.map((scope) => {
    const ops = ROUTES.filter((r) => r.scopes?.includes(scope)).map((r) => `\`${r.method.toUpperCase()} ${r.path}\``);
    return `| \`${scope}\` | ${SCOPE_GRANTS[scope]} | ${ops.join(", ")} |`;
  });
  const list = (scopes: readonly Scope[]) => scopes.map((x) => `\`${x}\``).join(", ");
  return [
    "Send the key in the `Authorization` header of every request: `Authorization: Bearer <API_KEY>`. Keys in the query string are refused. A missing, malformed, unknown, revoked or expired key, or a call from outside the key's IP allowlist, is `401 unauthorized` (all alike on purpose); a key without the operation's scope is `403 insufficient_scope`.",
    "**Getting a key**",
    [
      `- **Public sandbox key**, published on purpose, to try the API now: \`${PUBLIC_SANDBOX_KEY}\`. Test mode; answers only the documented test numbers and addresses (others: \`403 sandbox_magic_only\`), at most 30 requests a minute and 1,000 a day per IP address, jobs of at most 10 rows, no webhooks. Scopes: ${list(SANDBOX_SCOPES)}.`,
      `- **Personal test key** (\`svc_test_…\`), free, any number: fill in the page [${baseUrl}/get-test-key](${baseUrl}/get-test-key), or call \`GET /v1/test-keys/challenge\` and \`POST /v1/test-keys\` (no key needed). Shown once; it has every scope, \`webhooks:manage\` included.`,
      "- **Keys of an account** (test, live or agent), made by the operator of the service on its server: `npm run admin -- key create --account <account id> --mode test` (or `--mode live`, `--mode agent --scopes …`). Shown once.",
    ].join("\n"),
    "**Kinds of key** (by prefix)",
    [
      "- `svc_test_…`: test mode: fixed answers from documented test values, never reaches a real network, never billed.",
      "- `svc_live_…`: live mode: real checks, billed per conclusive answer; test values are refused (`400 test_number_only`).",
      "- `svc_agent_…`: for AI agents and the MCP server: live checks, only the scopes it was issued with, and a daily spend cap.",
    ].join("\n"),
    `**Scopes.** Test and live keys made without a list get ${list(DEFAULT_SCOPES)} (not \`webhooks:manage\`, which is granted on purpose); agent keys have exactly the scopes issued. Each operation names the scope it needs.`,
    ["| Scope | Grants | Operations |", "|---|---|---|", ...scopeRows].join("\n"),
  ].join("\n\n");
}

/**
 * Ties a check code to its attributes schema: for each known code, `if service is
 * the code then attributes is its schema or null`. A code added later matches no
 * `if`, so its attributes need only be an object (docs/api-decisions.md#check-answers).
 */
function checkAttributesByService(): Json[] {
  return CHECK_CODES.map((code) => ({
    if: { properties: { service: { const: code } }, required: ["service"] },
    then: { properties: { attributes: { anyOf: [{ $ref: `#/components/schemas/${CHECK_ATTRIBUTES[code].$id}` }, { type: "null" }] } } },
  }));
}

/**
 * The OpenAPI 3.1 document, built from the same route table and schemas the gateway
 * validates with. Decisions the spec leaves open are written into descriptions.
 */
export function buildOpenApi(baseUrl: string): Json {
  const components: Record<string, unknown> = {};
  // Schemas that are only reached through `Type.Ref(...)` (a bare `$ref` by name) are never
  // walked into, so register them here or their references dangle.
  for (const s of [MoneySchema, CheckResultSchema, ResultRowSchema, ErrorSchema, ProgressSchema, ServiceSchema]) schemaRef(s, components);
  const paths: Json = {};
  for (const route of ROUTES) {
    const item = (paths[route.path] ??= {}) as Json;
    item[route.method] = operation(route, components);
  }
  const webhooks: Json = {};
  for (const [type, schema] of Object.entries(EVENT_PAYLOADS)) {
    webhooks[type] = {
      post: {
        // Names the handler a generated server stub gets: `lookup.completed` → `lookupCompletedEvent`.
        operationId: `${type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase())}Event`,
        summary: `${type} event`,
        description: "Signed with Standard Webhooks headers `webhook-id`, `webhook-timestamp`, `webhook-signature`. Answer any 2xx within 10 seconds. Deduplicate on the event `id`.",
        requestBody: { content: { "application/json": { schema: convert(schema, components) } } },
        responses: { "2XX": { description: "Received." } },
        // We call the customer's endpoint: no API key is sent; the signature authenticates us.
        security: [],
      },
    };
  }
  openResponseEnums(paths, webhooks, components);
  applyExamples(paths, baseUrl);
  (components.CheckResult as Json).allOf = checkAttributesByService();
  const errorsPage = `${baseUrl}/docs/errors`;
  const errorCode = (((components.Error as Json).properties as Json).error as Json).properties as Json;
  errorCode.code = { ...(errorCode.code as Json), description: `${(errorCode.code as Json).description} What each one means: [Error codes](${errorsPage}).` };
  return {
    openapi: "3.1.0",
    info: {
      title: "Phone and E-mail Validation API",
      version: API_VERSION,
      description: [
        "Checks phone numbers and e-mail addresses: spam risk, reachability, WhatsApp and Signal registration, carrier, and mailbox existence.",
        "Money: US dollars; amounts are decimal strings with 2 to 6 fraction digits (`{\"amount\": \"0.0025\", \"currency\": \"USD\"}`); `max_cost.amount` also accepts a JSON number.",
        `Authentication: \`Authorization: Bearer <API_KEY>\`. To try it now, use the public sandbox key \`${PUBLIC_SANDBOX_KEY}\` (documented test values only), or get a personal test key at [${baseUrl}/get-test-key](${baseUrl}/get-test-key). How to get each kind of key and what every scope grants: [Authentication](#description/authentication) below, also the \`bearerKey\` security scheme's description.`,
        `Modes: keys \`svc_test_…\` (fixed data, never billed), \`svc_live_…\` and \`svc_agent_…\` (real checks, billed per conclusive answer). The test values and their answers: [Test mode](${baseUrl}/docs/test-mode); from a test key to live answers: [Going live](${baseUrl}/docs/going-live). Every guide (errors, idempotency and retries, webhooks, bulk jobs and CSV, the SDK, CLI and MCP server): [${baseUrl}/docs/guides](${baseUrl}/docs/guides).`,
        "Answers: every check result carries `service`, `status`, `registered` and `attributes`; the attributes of each check, and what `registered` means for it, are the `…Attributes` schemas (NumberSpamAttributes, EmailAttributes, …).",
        `Errors: every non-2xx response is \`{error: {code, message, status, retryable, param, suggestion?, doc_url, request_id}}\`; branch on \`code\`, falling back to the HTTP status for a code you do not know. Every code, its status, whether to retry and what to do: [Error codes](${errorsPage}).`,
        "Versioning: v1 in the path; additive changes only within v1 (new endpoints, optional fields, response fields, error codes, enum values, check codes, event types). Enums in responses and events are open lists: their known values are documented, and a client treats an unknown one as unknown. Deprecated operations answer with `Deprecation`, `Sunset` and `Link` headers.",
        // The same text as the bearerKey scheme's: references that do not show a scheme's
        // description (Scalar shows only "Auth Required") show this section.
        `## Authentication\n\n${authDescription(baseUrl)}`,
      ].join("\n\n"),
    },
    externalDocs: { description: "Error codes: status, retryability and what to do", url: errorsPage },
    servers: [{ url: baseUrl }],
    tags: [...new Set(ROUTES.map((r) => r.tag))].map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    paths,
    webhooks,
    components: {
      schemas: components,
      securitySchemes: {
        bearerKey: { type: "http", scheme: "bearer", bearerFormat: "API key (svc_test_…, svc_live_… or svc_agent_…)", description: authDescription(baseUrl) },
      },
      headers: HEADERS,
      "x-error-codes": Object.fromEntries(Object.entries(ERROR_CODES).map(([code, v]) => [code, { ...v, guidance: ERROR_GUIDANCE[code as keyof typeof ERROR_CODES] }])),
    },
  };
}
