import { LIMITS as CONTRACT_LIMITS } from "@svc/contract";
import { AMOUNT_PATTERN, LIMITS, schemas } from "@svc/sdk";
import { startMcp, type McpSession } from "./harness";

/**
 * The tools' input schemas as an MCP client sees them (tools/list of the built
 * server) say what the contract says: list lengths are the SDK's LIMITS (the
 * contract's), and an argument that is a field of an API request has that field's
 * bounds. Listing tools sends nothing to the API, so no gateway is needed.
 */
let mcp: McpSession;
let tools: Map<string, { properties: Record<string, any>; required?: string[] }>;
let instructions: string;

beforeAll(async () => {
  mcp = await startMcp({ SVC_API_KEY: `svc_test_${"a".repeat(36)}`, SVC_BASE_URL: "http://127.0.0.1:9", SVC_MCP_LOG_LEVEL: "silent" });
  tools = new Map((await mcp.client.listTools()).tools.map((t) => [t.name, t.inputSchema as any]));
  instructions = mcp.client.getInstructions() ?? "";
}, 30_000);
afterAll(async () => {
  await mcp?.close();
});

const input = (tool: string) => tools.get(tool)!.properties;
const count = (n: number) => n.toLocaleString("en-US");

describe("the MCP server's limits are the SDK's, which are the contract's", () => {
  it("identifiers per call and checks per request", () => {
    expect(LIMITS).toEqual(CONTRACT_LIMITS);
    for (const tool of ["lookup"]) {
      expect([tool, input(tool).numbers.maxItems, input(tool).emails.maxItems]).toEqual([tool, LIMITS.lookupIdentifiers, LIMITS.lookupIdentifiers]);
    }
    for (const tool of ["estimate_job", "create_job"]) {
      expect([tool, input(tool).numbers.maxItems, input(tool).emails.maxItems]).toEqual([tool, LIMITS.jobIdentifiers, LIMITS.jobIdentifiers]);
    }
    for (const tool of ["lookup", "estimate_job", "create_job"]) {
      expect([tool, input(tool).checks.minItems, input(tool).checks.maxItems]).toEqual([tool, 1, LIMITS.checksPerRequest]);
    }
  });

  it("tells the agent those limits", () => {
    expect(instructions).toContain(`lookup (up to ${count(LIMITS.lookupIdentifiers)} identifiers`);
    expect(instructions).toContain(`create_job (up to ${count(LIMITS.jobIdentifiers)},`);
  });
});

describe("tool arguments that are fields of an API request have the contract's bounds", () => {
  const L = schemas.LookupRequest.properties;
  const J = schemas.JobRequest.properties;
  const W = schemas.WaitQuery.properties.wait;
  const R = schemas.ResultsQuery.properties;

  it("lookup: checks and wait as POST /v1/lookup takes them; only checks required, as there", () => {
    expect(input("lookup").checks).toMatchObject({ minItems: L.checks.minItems, maxItems: L.checks.maxItems });
    expect(input("lookup").wait).toMatchObject({ type: "number", minimum: L.wait.minimum, maximum: L.wait.maximum });
    expect(tools.get("lookup")!.required).toEqual(schemas.LookupRequest.required);
  });

  it("estimate_job and create_job: as POST /v1/jobs takes them", () => {
    for (const tool of ["estimate_job", "create_job"]) {
      expect([tool, input(tool).checks]).toMatchObject([tool, { minItems: J.checks.minItems, maxItems: J.checks.maxItems }]);
      expect([tool, tools.get(tool)!.required]).toEqual([tool, schemas.JobRequest.required]);
    }
    expect(input("create_job").webhook_endpoint_id).toMatchObject({ type: "string", maxLength: J.webhook_endpoint_id.maxLength });
  });

  it("ids and waits as GET /v1/lookups/{id} and /v1/jobs/{id} take them", () => {
    for (const tool of ["get_lookup", "get_job", "get_job_results"]) {
      expect([tool, input(tool).id]).toMatchObject([tool, { type: "string", minLength: schemas.IdParam.minLength, maxLength: schemas.IdParam.maxLength }]);
    }
    for (const tool of ["get_lookup", "get_job"]) {
      expect([tool, input(tool).wait]).toMatchObject([tool, { type: "integer", minimum: W.minimum, maximum: W.maximum }]);
    }
  });

  it("get_job_results: the cursor and status filter as the results endpoint takes them, a page no larger than its maximum", () => {
    expect(input("get_job_results").after).toMatchObject({ type: "string", maxLength: R.after.maxLength });
    expect(input("get_job_results").status).toMatchObject({ type: "string", maxLength: R.status.maxLength });
    expect(input("get_job_results").limit.maximum).toBeLessThanOrEqual(R.limit.maximum as number);
  });

  it("confirm_max_cost is an amount as the API reads one (the SDK's AMOUNT_PATTERN)", () => {
    for (const tool of ["lookup", "create_job"]) expect([tool, new RegExp(input(tool).confirm_max_cost.pattern).source]).toEqual([tool, AMOUNT_PATTERN.source]);
  });
});
