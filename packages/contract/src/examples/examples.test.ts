import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { buildOpenApi } from "../openapi";
import { ROUTES } from "../routes";
import { RECORDED_CALLS } from "./recorded";

const doc = buildOpenApi("https://api.example.com") as Record<string, any>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: "https://api.example.com/openapi.json", components: doc.components });

/** An OpenAPI media schema, compiled against the document's components. */
function validatorOf(schema: Record<string, unknown>) {
  const rebased = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"https://api.example.com/openapi.json#/components/'));
  return ajv.compile(rebased);
}

describe("the recorded examples (tests/docs/examples.test.ts records them from a test-mode gateway)", () => {
  it("give every operation a successful example, and one of an error", () => {
    for (const route of ROUTES.filter((r) => r.operationId !== "getOpenApi")) {
      const calls = RECORDED_CALLS.filter((c) => c.operationId === route.operationId);
      expect({ op: route.operationId, ok: calls.some((c) => c.status < 300) }).toEqual({ op: route.operationId, ok: true });
    }
    expect(RECORDED_CALLS.filter((c) => c.status >= 400).map((c) => c.status).sort()).toEqual(expect.arrayContaining([400, 401, 404]));
  });

  it.each(RECORDED_CALLS.map((c, i) => [`${c.operationId} ${c.status} (#${i})`, c] as const))("%s: request and answer validate against the document", (_name, call) => {
    const route = ROUTES.find((r) => r.operationId === call.operationId)!;
    const operation = doc.paths[route.path][call.method];
    if (call.body !== undefined && call.status < 300) {
      const validate = validatorOf(operation.requestBody.content["application/json"].schema);
      expect({ valid: validate(call.body), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
    }
    const media = operation.responses[String(call.status)]?.content?.[call.contentType ?? "application/json"];
    if (call.status === 204) return expect(call.response).toBeNull();
    expect(media).toBeDefined();
    if (call.contentType !== "application/json") return expect(typeof call.response).toBe("string");
    const validate = validatorOf(media.schema);
    expect({ valid: validate(call.response), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
  });

  it("are in the document: request body, answer per status and code samples", () => {
    const lookup = doc.paths["/v1/lookup"].post;
    expect(lookup.requestBody.content["application/json"].example).toEqual(RECORDED_CALLS[0]!.body);
    expect(lookup.responses["200"].content["application/json"].example.id).toMatch(/^lkp_/);
    expect(lookup.responses["400"].content["application/json"].example.error.code).toBe("invalid_request");
    expect(lookup["x-codeSamples"].map((s: { label: string }) => s.label)).toEqual(["curl", "TypeScript SDK", "CLI", "MCP tool"]);
  });
});
