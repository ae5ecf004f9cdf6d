import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { buildOpenApi, CHECK_ATTRIBUTES } from "@svc/contract";
import { CHECKS, PUBLIC_SANDBOX_KEY, TEST_PROFILES, type CheckCode } from "@svc/domain";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * The answer of every check, three ways: the contract's per-check attributes
 * schemas (what the reference shows and the SDK is typed from), the attribute lists
 * GET /v1/services answers, and the domain catalog; and what the gateway really
 * answers validates against the document.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
}, 60_000);
afterAll(async () => {
  await gw?.close();
});

type Json = Record<string, any>;
const doc = buildOpenApi("https://api.example.com") as Json;

/** The JSON type the catalog writes for a TypeBox property: `string`, `integer|null`, … */
function typeOf(schema: Json): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).join("|");
  return String(schema.type);
}

function documentAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const rewrite = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "doc#/$defs/"));
  ajv.addSchema(rewrite({ $id: "doc", $defs: doc.components.schemas }) as object, "doc");
  return ajv;
}

describe("the answer of every check", () => {
  it("GET /v1/services, the contract and the domain catalog list the same attributes, types and known values", async () => {
    const res = await gw.http().get("/v1/services");
    expect(res.status).toBe(200);
    const listed = res.body.data as Array<{ code: CheckCode; attributes: Array<{ name: string; type: string; description: string; values?: string[] }> }>;
    expect(listed.length).toBeGreaterThanOrEqual(5);
    for (const service of listed) {
      const schema = CHECK_ATTRIBUTES[service.code] as unknown as Json;
      expect([service.code, schema]).toEqual([service.code, expect.any(Object)]);
      const fromContract = Object.entries(schema.properties as Json).map(([name, p]) => ({
        name,
        type: typeOf(p as Json),
        description: (p as Json).description,
        ...((p as Json).enum || (p as Json).anyOf?.[0]?.enum ? { values: (p as Json).enum ?? (p as Json).anyOf[0].enum } : {}),
      }));
      expect([service.code, service.attributes]).toEqual([service.code, fromContract]);
      expect([service.code, service.attributes]).toEqual([service.code, CHECKS[service.code].attributes.map((a) => ({ ...a }))]);
    }
  });

  it("a sandbox lookup's answers validate against the document's Lookup, each check's attributes against its own schema", async () => {
    const numbers = TEST_PROFILES.filter((p) => p.kind === "number" && !p.unavailable).slice(0, 6).map((p) => p.value);
    const emails = TEST_PROFILES.filter((p) => p.kind === "email" && !p.unavailable).slice(0, 4).map((p) => p.value);
    const checks: CheckCode[] = ["number.spam", "whatsapp", "carrier", "email"];
    const res = await gw.http().post("/v1/lookup").set("Authorization", `Bearer ${PUBLIC_SANDBOX_KEY}`).send({ numbers, emails, checks });
    expect(res.status).toBe(200);
    const ajv = documentAjv();
    const valid = ajv.validate({ $ref: "doc#/$defs/Lookup" }, res.body);
    expect([valid, ajv.errorsText(ajv.errors)]).toEqual([true, "No errors"]);
    const seen = new Set<string>();
    for (const row of res.body.results as Json[]) {
      for (const c of row.checks as Json[]) {
        if (!c.attributes) continue;
        seen.add(c.service);
        const own = ajv.validate({ $ref: `doc#/$defs/${CHECK_ATTRIBUTES[c.service as CheckCode].$id}` }, c.attributes);
        expect([c.service, own, Object.keys(c.attributes).every((k) => k in CHECK_ATTRIBUTES[c.service as CheckCode].properties)]).toEqual([c.service, true, true]);
      }
    }
    expect([...seen].sort()).toEqual([...checks].sort());
    // The same document refuses an answer whose attribute has the wrong type.
    const broken = structuredClone(res.body);
    const spam = (broken.results as Json[]).flatMap((r) => r.checks as Json[]).find((c) => c.service === "number.spam" && c.attributes);
    spam.attributes.risk_score = String(spam.attributes.risk_score);
    expect(ajv.validate({ $ref: "doc#/$defs/Lookup" }, broken)).toBe(false);
  });
});
