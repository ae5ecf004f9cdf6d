import { readFileSync } from "node:fs";
import path from "node:path";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { bodies, startMcp, startRecorder, type McpSession } from "./harness";

/**
 * The MCP server as an MCP client runs it: the official client spawning the built
 * `svc-mcp` over stdio, against the real gateway (loopback HTTP, real Postgres and
 * Redis), in test mode. Live money is in live.test.ts.
 */
let gw: TestGateway;
let recorder: Awaited<ReturnType<typeof startRecorder>>;
let k: TestKey;
let mcp: McpSession;
const sessions: McpSession[] = [];

const PAYING = ["lookup", "create_job"];
const TOOLS = ["create_job", "estimate_job", "get_account", "get_job", "get_job_results", "get_lookup", "list_services", "lookup"];
const numbersList = (n: number, from = 1000) => Array.from({ length: n }, (_, i) => `+1415555${String(from + i * 7).padStart(4, "0")}`);

beforeAll(async () => {
  gw = await startTestGateway();
  recorder = await startRecorder(gw.url);
  k = await accountWithKey(gw.store, gw.env.keyHashSecret);
  mcp = await startMcp({ SVC_API_KEY: k.key, SVC_BASE_URL: recorder.url });
  sessions.push(mcp);
}, 30_000);
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => undefined);
  await recorder?.close();
  await gw?.close();
});

describe("tools", () => {
  it("lists every tool with a JSON-schema input, an output schema and annotations; paying tools take confirm_max_cost", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type).toBe("object");
      expect(t.description?.length).toBeGreaterThan(40);
      expect(t.annotations?.readOnlyHint).toBe(!PAYING.includes(t.name));
    }
    const lookup = tools.find((t) => t.name === "lookup")!;
    expect(lookup.inputSchema.required).toEqual(["checks"]);
    expect(Object.keys(lookup.inputSchema.properties ?? {})).toEqual(["numbers", "emails", "checks", "wait", "confirm_max_cost", "confirmation_token", "idempotency_key"]);
    expect((lookup.inputSchema.properties as any).numbers).toMatchObject({ type: "array", items: { type: "string" }, maxItems: 100 });
    const create = tools.find((t) => t.name === "create_job")!;
    expect((create.inputSchema.properties as any).numbers.maxItems).toBe(50_000);
    expect((create.inputSchema.properties as any).confirm_max_cost).toMatchObject({ type: "string", pattern: expect.any(String) });
    expect((create.inputSchema.properties as any).confirm_max_cost.description).toContain("confirmation_token");
    expect((create.inputSchema.properties as any).confirmation_token).toMatchObject({ type: "string", maxLength: 512, description: expect.stringContaining("for one call: spent once that call is done or refused for good") });
    expect((create.inputSchema.properties as any).confirmation_token.description).toContain("After an error with retryable: true it is still good");
    for (const name of PAYING) expect(tools.find((t) => t.name === name)!.description).toContain("confirmation_token");
    expect(tools.find((t) => t.name === "get_job")!.inputSchema.required).toEqual(["id"]);
  });

  it("says who it is (semver from package.json) and tells the agent the confirmation rule", async () => {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "packages", "mcp", "package.json"), "utf8"));
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.bin).toEqual({ "svc-mcp": "dist/cli.js" });
    expect(mcp.client.getServerVersion()).toMatchObject({ name: "svc-mcp", version: pkg.version });
    const instructions = mcp.client.getInstructions() ?? "";
    expect(instructions).toContain("confirmation_required");
    expect(instructions).toContain("confirmation_token");
    expect(instructions).toContain("1.00 USD");
    expect(instructions).toContain("spend_cap_reached");
  });
});

describe("a cheap call", () => {
  it("lookup with a test key answers every row at once, free, sending the threshold as max_cost", async () => {
    recorder.requests.length = 0;
    const r = await mcp.call("lookup", { numbers: ["+12025550101", "+12025550100"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    expect(r.isError).toBe(false);
    expect(r.data.lookup).toMatchObject({ status: "completed", livemode: false, checks: ["number.spam", "email"], billed_checks: 0 });
    expect(r.data.lookup.rows).toHaveLength(3);
    expect(r.data.lookup.rows[0]).toMatchObject({ row: 1, kind: "number", e164: "+12025550101", status: "valid", checks: [{ service: "number.spam", status: "ok", registered: true, attributes: { risk_level: "high" }, billed: false }] });
    expect(r.data.lookup.rows[2]).toMatchObject({ kind: "email", email: "deliverable@example.com" });
    expect(r.data.cost).toEqual({ max_cost: "0.00", max_cost_sent: "1.00", confirmed: false, currency: "USD" });
    // The concise form: no per-check timestamps, no null fields.
    expect(JSON.stringify(r.data)).not.toContain("checked_at");
    expect(JSON.stringify(r.data.lookup.rows[0])).not.toContain("null");
    // On the wire: the catalog for prices, then the lookup capped at the threshold.
    expect(recorder.requests.map((q) => `${q.method} ${q.path}`)).toEqual(["GET /v1/services", "POST /v1/lookup"]);
    expect(bodies(recorder.requests, "POST", "/v1/lookup")[0].max_cost).toEqual({ amount: "1.00" });
    expect(recorder.requests[1]?.headers["idempotency-key"]).toMatch(/^[\x20-\x7e]{1,255}$/);
  });

  it("a pending lookup says what to do next; get_lookup waits for it", async () => {
    const r = await mcp.call("lookup", { numbers: ["+12025550107"], checks: ["spam"], wait: 0 });
    expect(r.data.lookup.status).toBe("pending");
    expect(r.data.lookup.next).toContain("get_lookup");
    const done = await mcp.call("get_lookup", { id: r.data.lookup.id, wait: 10 });
    expect(done.isError).toBe(false);
    expect(done.data.lookup).toMatchObject({ id: r.data.lookup.id, status: "completed" });
    expect(done.data.lookup.rows[0].input).not.toBe("+12025550107"); // masked on later reads
  });

  it("list_services gives each check's price for the key's mode (test: 0)", async () => {
    const r = await mcp.call("list_services");
    expect(r.data.price_mode).toBe("test");
    expect(r.data.account_specific).toBe(true);
    const spam = r.data.services.find((s: { code: string }) => s.code === "number.spam");
    expect(spam).toMatchObject({ aliases: ["spam"], input: "number", realtime: true, price: "0.00", currency: "USD" });
  });

  it("get_account gives balance and limits in one answer", async () => {
    const r = await mcp.call("get_account");
    expect(r.isError).toBe(false);
    expect(r.data.account).toMatchObject({ id: k.accountId, livemode: false, balance: "10.00", currency: "USD" });
    expect(r.data.limits).toMatchObject({ key_daily_spend_cap: null, request_sizes: { lookup_identifiers: 100 } });
    expect(r.data.key).toEqual({ kind: "test", confirm_above: "1.00" });
  });
});

describe("more than 100 numbers needs confirmation even when free (test key)", () => {
  it("create_job answers confirmation_required with the amount and counts, then proceeds with confirm_max_cost", async () => {
    const args = { numbers: numbersList(150), emails: ["deliverable@example.com"], checks: ["spam", "email"] };
    recorder.requests.length = 0;
    const first = await mcp.call("create_job", args);
    expect(first.isError).toBe(true);
    expect(first.data.error).toMatchObject({
      code: "confirmation_required",
      reasons: ["more_than_100_numbers"],
      max_cost: "0.00",
      identifiers: 151,
      numbers: 150,
      emails: 1,
      checks_total: 151,
      livemode: false,
      threshold: "1.00",
      confirm: { arguments: { confirm_max_cost: "0.00", confirmation_token: expect.stringMatching(/^cfm1\.create_job\.0\./) }, single_use: true, expires_at: expect.any(String) },
    });
    expect(first.data.error.message).toContain('confirm_max_cost: "0.00"');
    expect(first.data.error.message).toContain("confirmation_token");
    expect(first.data.error.message).toContain("Test key: nothing is charged");
    // Only the free estimate went out.
    expect(recorder.requests.map((q) => `${q.method} ${q.path}`)).toEqual(["POST /v1/jobs/estimate"]);

    const estimate = await mcp.call("estimate_job", args);
    expect(estimate.data.confirmation).toEqual({ required: true, reasons: ["more_than_100_numbers"], confirm_max_cost: "0.00", confirmation_token: expect.stringMatching(/^cfm1\.create_job\./), expires_at: expect.any(String), threshold: "1.00" });
    expect(estimate.data.estimate).toMatchObject({ livemode: false, rows: { total: 151, valid: 151 }, max_cost: "0.00" });

    const second = await mcp.call("create_job", { ...args, ...first.data.error.confirm.arguments });
    expect(second.isError).toBe(false);
    expect(second.data.job).toMatchObject({ status: "completed", finished: true, livemode: false, progress: { total: 151, checks_total: 151, done: 151, percent: 100 } });
    expect(second.data.cost).toEqual({ max_cost: "0.00", max_cost_sent: "0.00", confirmed: true, currency: "USD" });
    expect(bodies(recorder.requests, "POST", "/v1/jobs").at(-1).max_cost).toEqual({ amount: "0.00" });

    // Paging through its results with the cursor.
    const seen: number[] = [];
    let after: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const r = await mcp.call("get_job_results", { id: second.data.job.id, limit: 60, ...(after ? { after } : {}) });
      expect(r.isError).toBe(false);
      seen.push(...r.data.rows.map((row: { row: number }) => row.row));
      if (!r.data.has_more) break;
      expect(r.data.next).toContain(r.data.next_cursor);
      after = r.data.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: 151 }, (_, i) => i + 1));
    const filtered = await mcp.call("get_job_results", { id: second.data.job.id, service: "email", status: "ok" });
    expect(filtered.data.rows.map((row: { kind: string }) => row.kind)).toEqual(["email"]);
  });

  it("100 numbers exactly, free, goes ahead without confirmation", async () => {
    const r = await mcp.call("create_job", { numbers: numbersList(100, 3000), checks: ["spam"] });
    expect(r.isError).toBe(false);
    expect(r.data.job.progress.total).toBe(100);
  });
});

describe("retried creates do not run twice", () => {
  it("the same create_job call returns the first job, replayed; a new idempotency_key runs it again", async () => {
    const args = { numbers: numbersList(3, 5000), checks: ["spam"] };
    const a = await mcp.call("create_job", args);
    const b = await mcp.call("create_job", args);
    expect(a.data.replayed).toBe(false);
    expect(b.data).toMatchObject({ replayed: true, job: { id: a.data.job.id } });
    expect(b.data.idempotency_key).toBe(a.data.idempotency_key);
    const c = await mcp.call("create_job", { ...args, idempotency_key: "agent-run-2" });
    expect(c.data).toMatchObject({ replayed: false, idempotency_key: "agent-run-2" });
    expect(c.data.job.id).not.toBe(a.data.job.id);
    const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM jobs WHERE account_id = $1 AND id = ANY($2)`, [k.accountId, [a.data.job.id, c.data.job.id]]);
    expect(rows[0].n).toBe(2);
  });

  it("lookup passes an agent's idempotency_key on: the repeat is the stored answer", async () => {
    const args = { numbers: ["+12025550100"], checks: ["spam"], idempotency_key: "agent-lookup-1" };
    const a = await mcp.call("lookup", args);
    const b = await mcp.call("lookup", args);
    expect(b.data).toMatchObject({ replayed: true, lookup: { id: a.data.lookup.id } });
  });
});

describe("errors are tool results the agent can read", () => {
  it("an API refusal keeps its code, param and request id (isError)", async () => {
    const r = await mcp.call("lookup", { numbers: ["+12025550100"], checks: ["nope"] });
    expect(r.isError).toBe(true);
    expect(r.data.error).toMatchObject({ code: "invalid_request", status: 400, retryable: false, request_id: expect.stringMatching(/^req_/) });
  });

  it("an unknown job is not_found; a malformed confirm_max_cost is refused before anything is sent", async () => {
    expect((await mcp.call("get_job", { id: "job_doesnotexist" })).data.error.code).toBe("not_found");
    recorder.requests.length = 0;
    const bad = await mcp.call("lookup", { numbers: ["+12025550100"], checks: ["spam"], confirm_max_cost: "1,20" });
    expect(bad.isError).toBe(true);
    expect(bad.raw.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("confirm_max_cost") });
    expect(recorder.requests).toHaveLength(0);
  });

  it("a key without the tool's scope: insufficient_scope naming the scope", async () => {
    const narrow = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write"] });
    const s = await startMcp({ SVC_API_KEY: narrow.key, SVC_BASE_URL: gw.url });
    sessions.push(s);
    const r = await s.call("create_job", { numbers: ["+14155550199"], checks: ["spam"] });
    expect(r.data.error).toMatchObject({ code: "insufficient_scope", status: 403, scope_needed: "jobs:write" });
    const acct = await s.call("get_account");
    expect(acct.data.error).toMatchObject({ code: "insufficient_scope", scope_needed: "account:read" });
    expect(s.transcript() + s.stderr()).not.toContain(narrow.key);
  });

  it("without SVC_API_KEY: missing_api_key telling the operator what to set; list_services still works", async () => {
    const s = await startMcp({ SVC_BASE_URL: gw.url });
    sessions.push(s);
    const r = await s.call("lookup", { numbers: ["+12025550100"], checks: ["spam"] });
    expect(r.data.error.code).toBe("missing_api_key");
    expect(r.data.error.message).toContain("SVC_API_KEY");
    const cat = await s.call("list_services");
    expect(cat.data).toMatchObject({ account_specific: false });
    expect(s.stderr()).toContain("SVC_API_KEY is not set");
  });
});

describe("the key is never shown", () => {
  it("appears in no tool result, in nothing on stderr, and on the wire only in the Authorization header", () => {
    expect(mcp.transcript().length).toBeGreaterThan(1000);
    expect(mcp.transcript()).not.toContain(k.key);
    expect(mcp.stderr()).toContain('"tool call"'); // debug logging was on: every call logged
    expect(mcp.stderr()).toContain("sdk: "); // the SDK's own debug lines too
    expect(mcp.stderr()).not.toContain(k.key);
    expect(mcp.stderr()).not.toContain(k.key.slice(9, 39)); // nor its random body
    expect(mcp.stderr()).not.toContain("+12025550101"); // identifiers stay out of logs
    for (const q of recorder.requests) {
      expect(q.headers.authorization).toBe(`Bearer ${k.key}`);
      expect(JSON.stringify({ ...q.headers, authorization: undefined }) + q.path + q.body).not.toContain(k.key);
    }
  });
});
