import { writeFileSync } from "node:fs";
import path from "node:path";
import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { RECORDED_CALLS, ROUTES, type RecordedCall } from "@svc/contract";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { accountWithKey } from "../support/fixtures";
import { masked, resolveExampleHooks } from "../support/examples";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * The reference's examples are what the fleet answers: this scenario calls every
 * operation in test mode with the documented test values and compares each answer with
 * the recorded one in packages/contract/src/examples/recorded.ts (ids, times, secrets
 * and nonces masked). `npm run docs:examples` runs it with UPDATE_EXAMPLES=1, which
 * writes the file instead (then `npm run build && npm run docs`).
 */
const UPDATE = process.env.UPDATE_EXAMPLES === "1";
/** The base URL the recorded answers name: a fleet of `npm run up` at its default port. */
const LOCAL_BASE = "http://localhost:8080";
const RECORDED_FILE = path.resolve(__dirname, "..", "..", "packages", "contract", "src", "examples", "recorded.ts");

let gw: TestGateway;
let personalKey: string;
const calls: RecordedCall[] = [];

async function call(operationId: string, key: RecordedCall["key"], request: { path: string; query?: Record<string, string>; body?: unknown; headers?: Record<string, string> }): Promise<RecordedCall> {
  const route = ROUTES.find((r) => r.operationId === operationId);
  if (!route) throw new Error(`no operation ${operationId}`);
  const url = request.query ? `${request.path}?${new URLSearchParams(request.query)}` : request.path;
  let req = gw.http()[route.method](url);
  const bearer = key === "sandbox" ? PUBLIC_SANDBOX_KEY : key === "personal" ? personalKey : key === "wrong" ? "svc_test_thisKeyDoesNotExist0000000000000" : null;
  if (bearer) req = req.set("Authorization", `Bearer ${bearer}`);
  for (const [name, value] of Object.entries(request.headers ?? {})) req = req.set(name, value);
  const res = request.body === undefined ? await req : await req.send(request.body as object);
  const contentType = String(res.headers["content-type"] ?? "").split(";")[0] || undefined;
  // As a fleet at its default address would have answered (doc_url, poll_url, Location…).
  const text = res.text ? res.text.replaceAll(gw.url, LOCAL_BASE) : null;
  const response = contentType === "application/json" && text ? JSON.parse(text) : text;
  const recorded: RecordedCall = { operationId, key, method: route.method, path: request.path, ...(request.query ? { query: request.query } : {}), ...(request.body !== undefined ? { body: request.body } : {}), status: res.status, ...(contentType ? { contentType } : {}), response };
  calls.push(recorded);
  return recorded;
}

const idOf = (c: RecordedCall) => (c.response as { id: string }).id;

beforeAll(async () => {
  gw = await startTestGateway({ resolveHost: resolveExampleHooks });
  personalKey = (await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: ["lookup:write", "jobs:write", "jobs:read", "account:read", "webhooks:manage"] })).key;
}, 60_000);
afterAll(async () => gw?.close());

/** The scenario: every operation, in an order where each finds what it needs. */
async function scenario(): Promise<void> {
  const lookupBody = { numbers: ["+12025550101"], emails: ["deliverable@example.com"], checks: ["number.spam", "email"] };
  await call("createLookup", "sandbox", { path: "/v1/lookup", body: lookupBody });
  const pending = await call("createLookup", "sandbox", { path: "/v1/lookup", body: { numbers: ["+12025550107"], checks: ["whatsapp"], wait: 0 } });
  await call("createLookup", "sandbox", { path: "/v1/lookup", body: { numbers: ["+12025550101"], checks: [] } });
  await call("createLookup", "wrong", { path: "/v1/lookup", body: lookupBody });
  await call("getLookup", "sandbox", { path: `/v1/lookups/${idOf(pending)}`, query: { wait: "10" } });
  await call("getLookup", "sandbox", { path: "/v1/lookups/lkp_0000000000000000000000" });

  const jobBody = { numbers: ["+12025550100", "+12025550101", "+12025550102"], emails: ["deliverable@example.com"], checks: ["number.spam", "email"] };
  await call("estimateJob", "sandbox", { path: "/v1/jobs/estimate", body: jobBody });
  const job = await call("createJob", "sandbox", { path: "/v1/jobs", body: jobBody });
  await call("getJob", "sandbox", { path: `/v1/jobs/${idOf(job)}` });
  await call("listJobResults", "sandbox", { path: `/v1/jobs/${idOf(job)}/results`, query: { limit: "2" } });
  await call("downloadJobResults", "sandbox", { path: `/v1/jobs/${idOf(job)}/download`, query: { format: "csv" } });
  await call("deleteJob", "sandbox", { path: `/v1/jobs/${idOf(job)}` });

  await call("getAccount", "sandbox", { path: "/v1/account" });
  await call("getLimits", "sandbox", { path: "/v1/limits" });
  await call("getUsage", "sandbox", { path: "/v1/usage", query: { from: "2026-11-01", to: "2026-11-07", group_by: "check" } });

  const endpoint = await call("createWebhookEndpoint", "personal", { path: "/v1/webhook_endpoints", body: { url: "https://hooks.example.com/svc", events: ["lookup.completed", "job.completed"] } });
  await call("createWebhookEndpoint", "sandbox", { path: "/v1/webhook_endpoints", body: { url: "https://hooks.example.com/svc", events: ["lookup.completed"] } });
  await call("listWebhookEndpoints", "personal", { path: "/v1/webhook_endpoints" });
  await call("updateWebhookEndpoint", "personal", { path: `/v1/webhook_endpoints/${idOf(endpoint)}`, body: { events: ["job.completed"] } });
  await call("testWebhookEndpoint", "personal", { path: `/v1/webhook_endpoints/${idOf(endpoint)}/test` });
  await call("deleteWebhookEndpoint", "personal", { path: `/v1/webhook_endpoints/${idOf(endpoint)}` });

  await call("listServices", "none", { path: "/v1/services" });
  const challenge = await call("getTestKeyChallenge", "none", { path: "/v1/test-keys/challenge", headers: { "X-Forwarded-For": "198.51.100.7" } });
  const { challenge: c, difficulty } = challenge.response as { challenge: string; difficulty: number };
  await call("createTestKey", "none", {
    path: "/v1/test-keys",
    body: { email: "ada@example.com", name: "Ada Lovelace", company: "Analytical Engines", use_case: "Checking sign-up numbers", challenge_token: `${c}:${solveChallenge(c, difficulty)}` },
    headers: { "X-Forwarded-For": "198.51.100.7" },
  });
  await call("getHealth", "none", { path: "/v1/health" });
}

describe("the reference's examples", () => {
  it("are what the fleet answers in test mode, operation by operation (UPDATE_EXAMPLES=1 records them)", async () => {
    await scenario();
    if (UPDATE) {
      // challenge tokens and the solved nonce are not kept: a reader solves their own.
      const kept = calls.map((c) => (c.operationId === "createTestKey" ? { ...c, body: { ...(c.body as object), challenge_token: "<challenge>:<nonce>" } } : c));
      writeFileSync(
        RECORDED_FILE,
        `// Generated by \`npm run docs:examples\` (tests/docs/examples.test.ts with UPDATE_EXAMPLES=1): what a test-mode\n// gateway answered to each call. Do not edit by hand.\nimport type { RecordedCall } from "./types";\n\nexport const RECORDED_CALLS: readonly RecordedCall[] = ${JSON.stringify(kept, null, 2)};\n`,
      );
      return;
    }
    const fresh = calls.map((c) => ({ operationId: c.operationId, status: c.status, response: masked(c.response) }));
    const recorded = RECORDED_CALLS.map((c) => ({ operationId: c.operationId, status: c.status, response: masked(c.response) }));
    expect(fresh).toEqual(recorded);
  }, 90_000);

  it("cover every operation of the contract", () => {
    const covered = new Set(RECORDED_CALLS.map((c) => c.operationId));
    expect(ROUTES.map((r) => r.operationId).filter((id) => !covered.has(id) && id !== "getOpenApi")).toEqual([]);
  });
});
