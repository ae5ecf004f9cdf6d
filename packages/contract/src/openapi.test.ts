import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { CHECKS, CHECK_CODES, PUBLIC_SANDBOX_KEY, SCOPES, TEST_PROFILES } from "@svc/domain";
import { ERROR_CODE_LIST, ERROR_CODES } from "./error-codes";
import { CHECK_ATTRIBUTES } from "./schemas/checks";
import { buildOpenApi, OPEN_ENUM_KEYWORD } from "./openapi";
import { ROUTES, type RouteDef } from "./routes";
import { EVENT_TYPES } from "./schemas/webhooks";

type Json = Record<string, any>;

const BASE = "https://api.example.test";
const doc = buildOpenApi(BASE) as Json;
const schemas = (doc.components?.schemas ?? {}) as Json;

/** Every `$ref` string anywhere in `value`, with the JSON path where it was found. */
function collectRefs(value: unknown, path = "#", out: Array<{ at: string; ref: string }> = []): Array<{ at: string; ref: string }> {
  if (Array.isArray(value)) value.forEach((v, i) => collectRefs(v, `${path}/${i}`, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$ref" && typeof v === "string") out.push({ at: path, ref: v });
      else collectRefs(v, `${path}/${k}`, out);
    }
  }
  return out;
}

/** Follows a local `$ref` into components.schemas. */
function deref(schema: Json): Json {
  const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref ?? "")?.[1];
  return name ? (schemas[name] as Json) : schema;
}

/**
 * What a TypeBox request schema should look like in the document, written
 * independently of openapi.ts: nested schemas with an `$id` become component
 * refs, bare TypeBox refs (`Money`) point into components, everything else is
 * copied as plain JSON.
 */
function expectedConversion(value: unknown, top = true): unknown {
  if (Array.isArray(value)) return value.map((v) => expectedConversion(v, false));
  if (!value || typeof value !== "object") return value;
  const src = value as Json;
  if (!top && typeof src.$id === "string") return { $ref: `#/components/schemas/${src.$id}` };
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (k === "$id") continue;
    if (k === "$ref" && typeof v === "string" && !v.startsWith("#")) out.$ref = `#/components/schemas/${v}`;
    else out[k] = expectedConversion(v, false);
  }
  return out;
}

function op(method: string, path: string): Json | undefined {
  return doc.paths?.[path]?.[method];
}

function allowsAnonymous(operation: Json): boolean {
  const security = (operation.security ?? doc.security ?? []) as Json[];
  return security.length === 0 || security.some((req) => Object.keys(req).length === 0);
}

/** Validates `document` with @seriousme/openapi-schema-validator (ESM only, so in a child Node process). */
function validateWithOfficialSchema(document: unknown): { valid: boolean; version: string; errors: unknown } {
  const entry = pathToFileURL(require.resolve("@seriousme/openapi-schema-validator")).href;
  const script = `
    import { Validator } from ${JSON.stringify(entry)};
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const res = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: res.valid, version: validator.version, errors: res.errors ?? null }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { input: JSON.stringify(document), encoding: "utf8", timeout: 20_000 });
  if (run.status !== 0) throw new Error(`validator process failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

type LintProblem = { ruleId: string; severity: string; message: string; pointer: string };

/**
 * Lints `document` with Redocly's own engine (@redocly/openapi-core, the library behind
 * `redocly lint`) and its `recommended` ruleset. ESM only, so in a child Node process.
 */
function lintWithRedocly(document: unknown): LintProblem[] {
  const entry = pathToFileURL(require.resolve("@redocly/openapi-core")).href;
  const script = `
    import { createConfig, lintFromString } from ${JSON.stringify(entry)};
    let input = "";
    for await (const chunk of process.stdin) input += chunk;
    // As redocly.yaml: examples are checked by ./examples/examples.test.ts with ajv (2020-12); Redocly reads the if/then of CheckResult as unevaluated properties.
    const config = await createConfig({ extends: ["recommended"], rules: { "no-invalid-media-type-examples": { severity: "error", allowAdditionalProperties: true } } });
    const problems = await lintFromString({ source: input, absoluteRef: "/openapi.json", config });
    process.stdout.write(JSON.stringify(problems.map((p) => ({ ruleId: p.ruleId, severity: p.severity, message: p.message, pointer: p.location?.[0]?.pointer ?? "" }))));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { input: JSON.stringify(document), encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`redocly lint process failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as LintProblem[];
}

/** Every schema object under `value` (following nothing), with its JSON path. */
function schemasWithin(value: unknown, path: string, out: Array<{ at: string; schema: Json }> = []): Array<{ at: string; schema: Json }> {
  if (Array.isArray(value)) value.forEach((v, i) => schemasWithin(v, `${path}/${i}`, out));
  else if (value && typeof value === "object") {
    out.push({ at: path, schema: value as Json });
    for (const [k, v] of Object.entries(value)) schemasWithin(v, `${path}/${k}`, out);
  }
  return out;
}

/** Schemas of everything the API sends: response bodies, webhook payloads, and the components they reach. */
function sentSchemas(document: Json): Array<{ at: string; schema: Json }> {
  const roots: Array<{ at: string; schema: unknown }> = [];
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
        for (const [type, media] of Object.entries(((response as Json).content ?? {}) as Json)) roots.push({ at: `${method} ${path} ${status} ${type}`, schema: (media as Json).schema });
      }
    }
  }
  for (const [type, item] of Object.entries(document.webhooks as Json)) roots.push({ at: `webhook ${type}`, schema: (item as Json).post.requestBody.content["application/json"].schema });
  const names = new Set<string>();
  const pending = collectRefs(roots.map((r) => r.schema)).map((r) => r.ref);
  while (pending.length > 0) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(pending.pop() ?? "")?.[1];
    if (!name || names.has(name)) continue;
    names.add(name);
    pending.push(...collectRefs(document.components.schemas[name]).map((r) => r.ref));
  }
  return [
    ...roots.flatMap((r) => schemasWithin(r.schema, r.at)),
    ...[...names].flatMap((name) => schemasWithin(document.components.schemas[name], `#/components/schemas/${name}`)),
  ];
}

/** ajv (JSON Schema 2020-12, as OpenAPI 3.1) over the document's components: `c-<Name>` validates with component Name. */
function documentAjv(document: Json): { ajv: Ajv2020; rewrite: (value: unknown) => unknown } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  // The document's $refs point at #/components/schemas; serve them from $defs.
  const rewrite = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "doc#/$defs/"));
  ajv.addSchema(rewrite({ $id: "doc", $defs: document.components.schemas }) as object, "doc");
  for (const [name, schema] of Object.entries(document.components.schemas as Json)) ajv.addSchema(rewrite(schema) as object, `c-${name}`);
  return { ajv, rewrite };
}

describe("buildOpenApi", () => {
  it("is OpenAPI 3.1.0 with a 1.x.y info.version and the given server", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toMatch(/^1\.\d+\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(doc.servers).toEqual([{ url: BASE }]);
  });

  it("is deterministic", () => {
    expect(buildOpenApi(BASE)).toEqual(doc);
  });

  it("has unique operationIds", () => {
    const ids = ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(ROUTES.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as [string, RouteDef]))("lists %s with its operationId", (_, route) => {
    const operation = op(route.method, route.path);
    expect(operation).toBeDefined();
    expect(operation?.operationId).toBe(route.operationId);
  });

  it("has no operations that are not in ROUTES", () => {
    const listed = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.keys(item as Json).map((m) => `${m} ${path}`));
    expect(listed.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it("declares every path template parameter as a required path parameter", () => {
    for (const route of ROUTES) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = ((op(route.method, route.path)?.parameters ?? []) as Json[]).filter((p) => p.in === "path");
      expect([route.operationId, declared.map((p) => p.name).sort()]).toEqual([route.operationId, names.sort()]);
      for (const p of declared) expect(p.required).toBe(true);
    }
  });

  it("resolves every $ref in the document to an entry of components.schemas or components.headers", () => {
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(0);
    const dangling = refs.filter(({ ref }) => {
      const [, kind, name] = /^#\/components\/(schemas|headers)\/([^/]+)$/.exec(ref) ?? [];
      const target = kind && name ? doc.components[kind]?.[name] : undefined;
      return !target || typeof target !== "object";
    });
    expect(dangling).toEqual([]);
  });

  it("has no empty component schemas", () => {
    for (const [name, schema] of Object.entries(schemas)) expect([name, Object.keys(schema as Json).length > 0]).toEqual([name, true]);
  });

  it("gives every route with a body an application/json requestBody equal to the converted request schema", () => {
    const withBody = ROUTES.filter((r) => r.body);
    expect(withBody.length).toBeGreaterThanOrEqual(5);
    for (const route of withBody) {
      const operation = op(route.method, route.path) as Json;
      expect(operation.requestBody?.required).toBe(true);
      const schema = operation.requestBody?.content?.["application/json"]?.schema as Json;
      expect(schema).toBeDefined();
      expect([route.operationId, deref(schema)]).toEqual([route.operationId, expectedConversion(route.body)]);
    }
  });

  it("gives routes without a body no requestBody", () => {
    for (const route of ROUTES.filter((r) => !r.body)) expect([route.operationId, op(route.method, route.path)?.requestBody]).toEqual([route.operationId, undefined]);
  });

  it("requires no key for health, services and test-keys, and a Bearer key everywhere else", () => {
    const open: Array<[string, string]> = [
      ["get", "/v1/health"],
      ["get", "/v1/services"],
      ["post", "/v1/test-keys"],
      ["get", "/v1/test-keys/challenge"],
      ["get", "/v1/openapi.json"],
    ];
    for (const [method, path] of open) {
      const operation = op(method, path) as Json;
      expect(operation).toBeDefined();
      expect([method, path, allowsAnonymous(operation)]).toEqual([method, path, true]);
    }
    // No authentication at all: the security requirement list is empty.
    const none: Array<[string, string]> = [
      ["get", "/v1/health"],
      ["post", "/v1/test-keys"],
    ];
    for (const [method, path] of none) expect(op(method, path)?.security).toEqual([]);
    expect(doc.components.securitySchemes.bearerKey).toMatchObject({ type: "http", scheme: "bearer" });
    for (const route of ROUTES.filter((r) => r.auth === "key")) {
      const operation = op(route.method, route.path) as Json;
      expect([route.operationId, allowsAnonymous(operation)]).toEqual([route.operationId, false]);
      expect(operation.security).toEqual([{ bearerKey: [] }]);
    }
  });

  it("lists every event type under webhooks", () => {
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const schema = deref(doc.webhooks[type].post.requestBody.content["application/json"].schema as Json);
      expect(schema.properties?.type).toMatchObject({ const: type });
    }
  });

  it("documents errors with the Error schema", () => {
    const error = schemas.Error as Json;
    expect(error).toBeDefined();
    expect(Object.keys(error.properties.error.properties).sort()).toEqual(
      ["code", "doc_url", "message", "param", "request_id", "retryable", "status", "suggestion"].sort(),
    );
  });

  it.each([
    ["post", "/v1/lookup"],
    ["get", "/v1/lookups/{id}"],
    ["post", "/v1/jobs/estimate"],
    ["post", "/v1/jobs"],
    ["get", "/v1/jobs/{id}"],
    ["delete", "/v1/jobs/{id}"],
    ["get", "/v1/jobs/{id}/results"],
    ["get", "/v1/jobs/{id}/download"],
    ["get", "/v1/account"],
    ["get", "/v1/limits"],
    ["get", "/v1/usage"],
    ["get", "/v1/webhook_endpoints"],
    ["post", "/v1/webhook_endpoints"],
    ["patch", "/v1/webhook_endpoints/{id}"],
    ["delete", "/v1/webhook_endpoints/{id}"],
    ["post", "/v1/webhook_endpoints/{id}/test"],
    ["get", "/v1/services"],
    ["post", "/v1/test-keys"],
    ["get", "/v1/health"],
    ["get", "/v1/openapi.json"],
  ])("has the spec's endpoint %s %s", (method, path) => {
    expect(op(method, path)).toEqual(expect.objectContaining({ operationId: expect.any(String), responses: expect.any(Object) }));
  });

  it("gives every webhook an operationId and an empty security requirement (we call the customer; no key is sent)", () => {
    const ids = new Set(ROUTES.map((r) => r.operationId));
    for (const type of EVENT_TYPES) {
      const post = doc.webhooks[type].post as Json;
      expect([type, post.security]).toEqual([type, []]);
      expect(post.operationId).toMatch(/^[a-z][A-Za-z0-9]*Event$/);
      expect(ids.has(post.operationId)).toBe(false);
      ids.add(post.operationId);
    }
  });

  it("links the error codes page from the description and externalDocs", () => {
    expect(doc.externalDocs).toEqual({ description: expect.any(String), url: `${BASE}/docs/errors` });
    expect(doc.info.description).toContain(`(${BASE}/docs/errors)`);
  });

  describe("open enums (versioning: new codes and enum values are additive)", () => {
    const sent = sentSchemas(doc);

    it("no schema of a response or webhook payload closes a value set with enum", () => {
      expect(sent.length).toBeGreaterThan(50);
      expect(sent.filter(({ schema }) => "enum" in schema).map(({ at }) => at)).toEqual([]);
    });

    it("keeps the known values documented: error codes, statuses, check codes", () => {
      const code = (schemas.Error as Json).properties.error.properties.code as Json;
      expect(code.type).toBe("string");
      expect(code[OPEN_ENUM_KEYWORD]).toEqual(ERROR_CODE_LIST);
      const open = sent.filter(({ schema }) => Array.isArray(schema[OPEN_ENUM_KEYWORD]));
      const where = (suffix: string) => open.find(({ at }) => at.endsWith(suffix))?.schema;
      expect(where("/CheckResult/properties/status")?.[OPEN_ENUM_KEYWORD]).toEqual(expect.arrayContaining(["ok", "unknown", "unsupported_country"]));
      expect(where("/CheckResult/properties/service")?.[OPEN_ENUM_KEYWORD]).toEqual(expect.arrayContaining(["number.spam", "whatsapp"]));
      expect(where("/Job/properties/status")?.[OPEN_ENUM_KEYWORD]).toEqual(expect.arrayContaining(["completed", "failed", "cancelled"]));
      expect(where("/Lookup/properties/status")?.[OPEN_ENUM_KEYWORD]).toEqual(["pending", "completed"]);
      expect(where("/WebhookEndpoint/properties/status")?.[OPEN_ENUM_KEYWORD]).toEqual(["pending_verification", "active"]);
      for (const { at, schema } of open) {
        expect([at, schema.type]).toEqual([at, "string"]);
        expect([at, schema.description]).toEqual([at, expect.stringContaining(`\`${schema[OPEN_ENUM_KEYWORD][0]}\``)]);
      }
    });

    it("a client validating with the document accepts a code and a status added later", () => {
      const { ajv, rewrite } = documentAjv(doc);
      const error = { error: { code: "brand_new_code", message: "m", status: 418, retryable: false, param: null, doc_url: "https://x.test/docs/errors#brand_new_code", request_id: "req_1" } };
      expect(ajv.validate("c-Error", error)).toBe(true);
      const result = { service: "number.future", status: "rate_capped", registered: null, attributes: null, cached: false, billed: false, checked_at: null };
      expect(ajv.validate("c-CheckResult", result)).toBe(true);
      // The same checks fail against a closed enum, which is what the document had before.
      const closed = JSON.parse(JSON.stringify(schemas.Error)) as Json;
      closed.properties.error.properties.code = { type: "string", enum: ERROR_CODE_LIST };
      expect(ajv.validate(rewrite(closed) as object, error)).toBe(false);
    });

    it("request bodies and parameters still close their value sets (the gateway refuses unknown values)", () => {
      const checks = (schemas.LookupRequest as Json).properties.checks.items as Json;
      expect(checks.enum).toEqual(expect.arrayContaining(["number.spam", "spam"]));
      const format = ((op("get", "/v1/jobs/{id}/download")?.parameters ?? []) as Json[]).find((p) => p.name === "format");
      expect(format?.schema.enum).toEqual(["csv", "ndjson"]);
    });
  });

  describe("the answer of every check", () => {
    const checkResult = schemas.CheckResult as Json;
    const componentOf = (code: string) => `${code.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("")}Attributes`;

    it("has one named attributes component per check code, reached from CheckResult.attributes", () => {
      const alternatives = (checkResult.properties.attributes.anyOf as Json[]).map((a) => a.$ref ?? a.type);
      expect(alternatives).toEqual([...CHECK_CODES.map((c) => `#/components/schemas/${componentOf(c)}`), "#/components/schemas/OtherCheckAttributes", "null"]);
      for (const code of CHECK_CODES) {
        const component = schemas[componentOf(code)] as Json;
        expect([code, component?.type, component?.["x-check-code"]]).toEqual([code, "object", code]);
        // Open: a new attribute is additive.
        expect([code, component.additionalProperties]).toEqual([code, undefined]);
        expect(component.description).toContain(CHECKS[code].registered);
        expect(component.description).toContain(CHECKS[code].billing);
      }
    });

    it("ties each check code to its schema with if/then, so an unknown code stays valid", () => {
      expect(checkResult.allOf).toEqual(
        CHECK_CODES.map((code) => ({
          if: { properties: { service: { const: code } }, required: ["service"] },
          then: { properties: { attributes: { anyOf: [{ $ref: `#/components/schemas/${componentOf(code)}` }, { type: "null" }] } } },
        })),
      );
    });

    it("agrees with the domain catalog (what GET /v1/services lists): names, order, JSON types, known values, descriptions", () => {
      const jsonType = (schema: Json): string => {
        if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(jsonType).join("|");
        return String(schema.type);
      };
      for (const code of CHECK_CODES) {
        const component = schemas[componentOf(code)] as Json;
        const props = Object.entries((component.properties ?? {}) as Json) as Array<[string, Json]>;
        const fromDoc = props.map(([name, p]) => ({ name, type: jsonType(p), description: p.description, values: p[OPEN_ENUM_KEYWORD] ?? p.anyOf?.[0]?.[OPEN_ENUM_KEYWORD] }));
        const fromDomain = CHECKS[code].attributes.map((a) => ({ name: a.name, type: a.type, description: a.description, values: a.values }));
        expect([code, fromDoc.map(({ description, ...rest }) => ({ ...rest, description: String(description).split(" Known values:")[0] }))]).toEqual([code, fromDomain]);
        // The TypeBox source agrees too (the SDK's types come from it).
        expect([code, Object.keys(CHECK_ATTRIBUTES[code].properties)]).toEqual([code, CHECKS[code].attributes.map((a) => a.name)]);
      }
    });

    it("says what registered means for every check, and what summary.registered counts", () => {
      const registered = checkResult.properties.registered as Json;
      for (const code of CHECK_CODES) expect(registered.description).toContain(`\`${code}\`: ${CHECKS[code].registered}`);
      expect(registered.description).toMatch(/scam number answers true/);
      const summary = (schemas.Lookup as Json).properties.summary.properties.registered as Json;
      expect(summary.description).toMatch(/over every check and row together/);
      expect(summary.description).toContain("number.spam");
    });

    it("validates every documented test-mode answer, and refuses an attribute of the wrong type", () => {
      const { ajv } = documentAjv(doc);
      let validated = 0;
      for (const profile of TEST_PROFILES) {
        for (const [service, answer] of Object.entries(profile.answers)) {
          const result = { service, ...answer, cached: false, billed: false, checked_at: "2026-11-01T00:00:00Z" };
          expect([profile.value, service, ajv.validate("c-CheckResult", result), ajv.errorsText(ajv.errors)]).toEqual([profile.value, service, true, "No errors"]);
          validated += 1;
        }
      }
      expect(validated).toBeGreaterThan(20);
      const spam = { service: "number.spam", status: "ok", registered: true, attributes: { risk_level: "high", risk_score: "80" }, cached: false, billed: true, checked_at: null };
      expect(ajv.validate("c-CheckResult", spam)).toBe(false);
      const mailbox = { service: "email", status: "ok", registered: true, attributes: { catch_all: "no" }, cached: false, billed: true, checked_at: null };
      expect(ajv.validate("c-CheckResult", mailbox)).toBe(false);
    });

    it("a client validating with the document accepts a new check code, a new attribute and a new attribute value", () => {
      const { ajv } = documentAjv(doc);
      const base = { status: "ok", registered: true, cached: false, billed: true, checked_at: null };
      expect(ajv.validate("c-CheckResult", { ...base, service: "rcs", attributes: { capable: true } })).toBe(true);
      expect(ajv.validate("c-CheckResult", { ...base, service: "number.spam", attributes: { risk_level: "severe", risk_score: 99, new_signal: "x" } })).toBe(true);
      expect(ajv.validate("c-CheckResult", { ...base, service: "carrier", attributes: { line_type: "satellite", carrier: null, country: "US", carrier_source: "registry" } })).toBe(true);
    });
  });

  describe("authentication, explained in the document", () => {
    const scheme = doc.components.securitySchemes.bearerKey as Json;

    it("says how to get each kind of key, with the public sandbox key written out", () => {
      for (const text of [PUBLIC_SANDBOX_KEY, "Authorization: Bearer <API_KEY>", `${BASE}/get-test-key`, "POST /v1/test-keys", "npm run admin -- key create", "svc_test_", "svc_live_", "svc_agent_"]) {
        expect([text, scheme.description.includes(text)]).toEqual([text, true]);
      }
    });

    it("lists every scope with what it grants and the operations it opens", () => {
      for (const scope of SCOPES) {
        const row = (scheme.description as string).split("\n").find((line) => line.startsWith(`| \`${scope}\` |`));
        expect([scope, row !== undefined]).toEqual([scope, true]);
        for (const route of ROUTES.filter((r) => r.scopes?.includes(scope))) expect([scope, row?.includes(`${route.method.toUpperCase()} ${route.path}`)]).toEqual([scope, true]);
      }
    });

    it("points at it from info.description, with the sandbox key", () => {
      expect(doc.info.description).toContain("`bearerKey` security scheme");
      expect(doc.info.description).toContain(PUBLIC_SANDBOX_KEY);
      // Shown where every reference shows it (Scalar does not show a scheme's description).
      expect(doc.info.description).toContain(`## Authentication\n\n${scheme.description}`);
    });
  });

  describe("response headers and names", () => {
    const responses = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).flatMap(([method, operation]) => Object.entries((operation as Json).responses as Json).map(([status, r]) => ({ at: `${method} ${path} ${status}`, status, r: r as Json }))),
    );

    it("declares X-Request-Id on every response, errors included", () => {
      expect(responses.length).toBeGreaterThan(100);
      expect(responses.filter(({ r }) => r.headers?.["X-Request-Id"]?.$ref !== "#/components/headers/X-Request-Id").map(({ at }) => at)).toEqual([]);
    });

    it("declares Retry-After on every 429 and 503, and on no other status but the idempotency 409", () => {
      const missing = responses.filter(({ status, r }) => (status === "429" || status === "503") && !r.headers?.["Retry-After"]);
      expect(missing.map(({ at }) => at)).toEqual([]);
      const others = responses.filter(({ status, r }) => status !== "429" && status !== "503" && r.headers?.["Retry-After"]).map(({ at }) => at);
      expect(others.sort()).toEqual(ROUTES.filter((r) => r.errors.includes("idempotency_request_in_progress")).map((r) => `${r.method} ${r.path} 409`).sort());
      // Only the codes the gateway sends it with.
      for (const code of ["rate_limited", "daily_cap_reached", "spend_cap_reached", "temporarily_unavailable"] as const) expect([429, 503]).toContain(ERROR_CODES[code].status);
    });

    it("gives the webhook endpoint operations a tag other than the events' Webhooks section", () => {
      const tags = (doc.tags as Json[]).map((t) => t.name as string);
      expect(tags).toContain("Webhook endpoints");
      expect(tags.map((t) => t.toLowerCase())).not.toContain("webhooks");
    });

    it.each(ROUTES.map((r) => [r.operationId, r.summary] as [string, string]))("titles %s with a short summary (%s)", (_, summary) => {
      expect(summary.length).toBeLessThanOrEqual(30);
      expect(summary).toMatch(/^[A-Z][^.;:()]*[^.\s]$/);
    });
  });

  describe("Redocly lint, recommended rules", () => {
    /**
     * Warnings we accept, each for a reason; anything else (and every error) fails.
     * - info-license: a commercial API; the description is not published under a licence.
     * - no-server-example.com: docs/openapi.json is built for a placeholder host; the
     *   gateway serves the document with its own PUBLIC_BASE_URL.
     * - operation-4xx-response on health (200 or 503) and the document itself (200): neither
     *   answers a 4xx a client could act on.
     */
    const ACCEPTED = [
      "info-license #/info",
      "no-server-example.com #/servers/0/url",
      "operation-4xx-response #/paths/~1v1~1health/get/responses",
      "operation-4xx-response #/paths/~1v1~1openapi.json/get/responses",
    ];
    const problems = lintWithRedocly(buildOpenApi("https://api.example.com"));

    it("finds no errors", () => {
      expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    });

    it("warns only about what we accept", () => {
      expect(problems.map((p) => `${p.ruleId} ${p.pointer}`).sort()).toEqual(ACCEPTED.sort());
    });

    it("the linter does flag a webhook without security (so the checks above can fail)", () => {
      const broken = JSON.parse(JSON.stringify(doc)) as Json;
      delete broken.webhooks["job.completed"].post.security;
      expect(lintWithRedocly(broken).filter((p) => p.severity === "error").map((p) => `${p.ruleId} ${p.pointer}`)).toEqual(["security-defined #/webhooks/job.completed/post"]);
    });
  });

  describe("against the official OpenAPI 3.1 schema", () => {
    it("the validator rejects a broken document (so the check below can fail)", () => {
      const broken = JSON.parse(JSON.stringify(doc)) as Json;
      broken.paths["/v1/health"].get.responses = "none";
      delete broken.info.title;
      const res = validateWithOfficialSchema(broken);
      expect(res.valid).toBe(false);
    });

    it("validates the generated document", () => {
      const res = validateWithOfficialSchema(doc);
      expect(res.errors).toBeNull();
      expect(res.valid).toBe(true);
      expect(res.version).toBe("3.1");
    });
  });
});
