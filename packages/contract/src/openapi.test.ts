import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { buildOpenApi } from "./openapi";
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

  it("resolves every $ref in the document to an entry of components.schemas", () => {
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(0);
    const dangling = refs.filter(({ ref }) => {
      const name = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1];
      return !name || !(name in schemas) || !schemas[name] || typeof schemas[name] !== "object";
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
