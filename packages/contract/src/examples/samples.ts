import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import type { RecordedCall } from "./types";

/**
 * The code samples of the reference, one place for every operation: curl, the TypeScript
 * SDK, the `svc` CLI and the MCP server's tool, each made from the operation's recorded
 * example (its request) so that what a sample sends is what the example shows. Every
 * sample runs as it is, pasted: one that needs an object (a lookup, a job, an endpoint)
 * makes it first. tests/docs/samples.test.ts runs each against a test-mode gateway.
 */
export type CodeSample = { lang: "Shell" | "JavaScript" | "JSON"; label: "curl" | "TypeScript SDK" | "CLI" | "MCP tool"; source: string };

/** The objects samples make before they read or change one. */
const PENDING_LOOKUP = { numbers: ["+12025550107"], checks: ["whatsapp"], wait: 0 };
const JOB = { numbers: ["+12025550100", "+12025550101", "+12025550102"], emails: ["deliverable@example.com"], checks: ["number.spam", "email"] };
const ENDPOINT = { url: "https://hooks.example.com/svc", events: ["lookup.completed", "job.completed"] };
const JOB_LIST = "printf '+12025550100\\n+12025550101\\n+12025550102\\ndeliverable@example.com\\n' > list.txt";
const CHALLENGE_NOTE = "# CHALLENGE_TOKEN: a challenge of GET /v1/test-keys/challenge and its solution, `<challenge>:<nonce>`\n# (the /get-test-key page solves it in your browser).";
const PERSONAL_NOTE = "# SVC_API_KEY: a personal test key from /get-test-key (the public sandbox key has no webhooks).";

const json = (value: unknown) => JSON.stringify(value);

/** `-H "Authorization: …"` for the key the example was made with. */
function curlAuth(call: RecordedCall): string[] {
  if (call.key === "sandbox") return [`-H "Authorization: Bearer ${PUBLIC_SANDBOX_KEY}"`];
  if (call.key === "personal") return ['-H "Authorization: Bearer $SVC_API_KEY"'];
  return [];
}

function curlCommand(call: RecordedCall, method: string, url: string, body?: unknown): string {
  const parts = [`curl -s${method === "GET" || (method === "POST" && body !== undefined) ? "" : ` -X ${method}`} "${url}"`, ...curlAuth(call)];
  if (body !== undefined) parts.push('-H "Content-Type: application/json"', `-d '${json(body)}'`);
  return parts.join(" \\\n  ");
}

/** The request of a recorded call, with the id of an object the sample made first in place of the recorded one. */
function requestUrl(base: string, call: RecordedCall, idVariable?: string): string {
  const path = idVariable ? call.path.replace(/\/(lkp|job|we)_[A-Za-z0-9]+/, `/$${idVariable}`) : call.path;
  const query = call.query ? `?${new URLSearchParams(call.query)}` : "";
  return `${base}${path}${query}`;
}

/** What a sample makes first, per operation that needs an object: a shell variable holding its id. */
const PREREQUISITE: Record<string, { variable: string; curl: (base: string, call: RecordedCall) => string; sdk: string; cli?: string }> = {
  getLookup: {
    variable: "LOOKUP",
    curl: (base, call) => `LOOKUP=$(${curlCommand(call, "POST", `${base}/v1/lookup`, PENDING_LOOKUP)} | jq -r .id)`,
    sdk: `const pending = await client.lookups.create(${json(PENDING_LOOKUP)});`,
  },
  getJob: jobFirst(),
  deleteJob: jobFirst(),
  listJobResults: jobFirst(),
  downloadJobResults: jobFirst(),
  updateWebhookEndpoint: endpointFirst(),
  deleteWebhookEndpoint: endpointFirst(),
  testWebhookEndpoint: endpointFirst(),
};

function jobFirst() {
  return {
    variable: "JOB",
    curl: (base: string, call: RecordedCall) => `JOB=$(${curlCommand(call, "POST", `${base}/v1/jobs`, JOB)} | jq -r .id)`,
    sdk: `const job = await client.jobs.create(${json(JOB)});`,
    cli: `${JOB_LIST}\nJOB=$(svc jobs create list.txt --checks number.spam,email --json | jq -r .id)`,
  };
}

function endpointFirst() {
  return {
    variable: "ENDPOINT",
    curl: (base: string, call: RecordedCall) => `ENDPOINT=$(${curlCommand(call, "POST", `${base}/v1/webhook_endpoints`, ENDPOINT)} | jq -r .id)`,
    sdk: `const endpoint = await client.webhookEndpoints.create(${json(ENDPOINT)});`,
    cli: `ENDPOINT=$(svc webhooks create --url ${ENDPOINT.url} --events ${ENDPOINT.events.join(",")} --json | jq -r .id)`,
  };
}

/** The SDK call of each operation, given the recorded request (`id` is the object made first). */
const SDK_CALL: Record<string, (call: RecordedCall) => string> = {
  createLookup: (c) => `client.lookups.create(${json(c.body)})`,
  getLookup: (c) => `client.lookups.get(pending.id, { wait: ${Number(c.query?.wait ?? 0)} })`,
  estimateJob: (c) => `client.jobs.estimate(${json(c.body)})`,
  createJob: (c) => `client.jobs.create(${json(c.body)})`,
  getJob: () => "client.jobs.get(job.id)",
  deleteJob: () => "client.jobs.purge(job.id)",
  listJobResults: (c) => `client.jobs.resultsPage(job.id, { limit: ${Number(c.query?.limit ?? 100)} })`,
  downloadJobResults: (c) => `client.jobs.download(job.id, { format: "${c.query?.format ?? "csv"}", to: "results.${c.query?.format ?? "csv"}" })`,
  getAccount: () => "client.account.get()",
  getLimits: () => "client.limits.get()",
  getUsage: (c) => `client.usage.get(${json(c.query)})`,
  listWebhookEndpoints: () => "client.webhookEndpoints.list()",
  createWebhookEndpoint: (c) => `client.webhookEndpoints.create(${json(c.body)})`,
  updateWebhookEndpoint: (c) => `client.webhookEndpoints.update(endpoint.id, ${json(c.body)})`,
  deleteWebhookEndpoint: () => "client.webhookEndpoints.delete(endpoint.id)",
  testWebhookEndpoint: () => "client.webhookEndpoints.test(endpoint.id)",
  listServices: () => "client.services.list()",
  getTestKeyChallenge: () => "client.testKeys.challenge()",
  createTestKey: (c) => `client.testKeys.create({ ...${json(c.body)}, challenge_token: process.env.CHALLENGE_TOKEN })`,
  getHealth: () => "client.health.check()",
};

/** The CLI command of each operation that has one (reading a lookup has none: `svc lookup` follows it). */
const CLI_COMMAND: Record<string, (call: RecordedCall) => string> = {
  createLookup: (c) => {
    const body = c.body as { numbers?: string[]; emails?: string[]; checks: string[] };
    return `svc lookup ${[...(body.numbers ?? []), ...(body.emails ?? [])].join(" ")} --checks ${body.checks.join(",")}`;
  },
  estimateJob: (c) => `${JOB_LIST}\nsvc jobs estimate list.txt --checks ${(c.body as { checks: string[] }).checks.join(",")}`,
  createJob: (c) => `${JOB_LIST}\nsvc jobs create list.txt --checks ${(c.body as { checks: string[] }).checks.join(",")} --wait`,
  getJob: () => 'svc jobs get "$JOB"',
  deleteJob: () => 'svc jobs purge "$JOB" --yes',
  listJobResults: (c) => `svc jobs results "$JOB" --limit ${c.query?.limit ?? 100}`,
  downloadJobResults: (c) => `svc jobs download "$JOB" --format ${c.query?.format ?? "csv"} --output results.${c.query?.format ?? "csv"}`,
  getAccount: () => "svc account",
  getLimits: () => "svc limits",
  getUsage: (c) => `svc usage --from ${c.query?.from} --to ${c.query?.to} --group-by ${c.query?.group_by ?? "day"}`,
  listWebhookEndpoints: () => "svc webhooks list",
  createWebhookEndpoint: (c) => {
    const body = c.body as { url: string; events: string[] };
    return `svc webhooks create --url ${body.url} --events ${body.events.join(",")}`;
  },
  updateWebhookEndpoint: (c) => `svc webhooks update "$ENDPOINT" --events ${(c.body as { events: string[] }).events.join(",")}`,
  deleteWebhookEndpoint: () => 'svc webhooks delete "$ENDPOINT"',
  testWebhookEndpoint: () => 'svc webhooks test "$ENDPOINT"',
  listServices: () => "svc services",
};

/** The MCP server's tool of each operation that has one, and its arguments (an id a previous tool call answered). */
const MCP_TOOL: Record<string, (call: RecordedCall) => { name: string; arguments: Record<string, unknown> }> = {
  createLookup: (c) => ({ name: "lookup", arguments: c.body as Record<string, unknown> }),
  getLookup: (c) => ({ name: "get_lookup", arguments: { id: "lkp_…", wait: Number(c.query?.wait ?? 0) } }),
  estimateJob: (c) => ({ name: "estimate_job", arguments: c.body as Record<string, unknown> }),
  createJob: (c) => ({ name: "create_job", arguments: c.body as Record<string, unknown> }),
  getJob: () => ({ name: "get_job", arguments: { id: "job_…" } }),
  listJobResults: (c) => ({ name: "get_job_results", arguments: { id: "job_…", limit: Number(c.query?.limit ?? 100) } }),
  getAccount: () => ({ name: "get_account", arguments: {} }),
  listServices: () => ({ name: "list_services", arguments: {} }),
};

export const MCP_TOOL_OF = (call: RecordedCall) => MCP_TOOL[call.operationId]?.(call);

/** The samples of one operation, from its first successful recorded call; `base` is the API's base URL. */
export function codeSamples(call: RecordedCall, base: string): CodeSample[] {
  const before = PREREQUISITE[call.operationId];
  const note = call.key === "personal" ? `${PERSONAL_NOTE}\n` : call.operationId === "createTestKey" ? `${CHALLENGE_NOTE}\n` : "";
  const method = call.method.toUpperCase();
  let body = call.body;
  let curl = curlCommand(call, method, requestUrl(base, call, before?.variable), body);
  if (call.operationId === "createTestKey") {
    body = { ...(call.body as object), challenge_token: "CHALLENGE_TOKEN" };
    curl = curlCommand(call, method, requestUrl(base, call), body).replace('"CHALLENGE_TOKEN"', `"'"$CHALLENGE_TOKEN"'"`);
  }
  const samples: CodeSample[] = [{ lang: "Shell", label: "curl", source: `${note}${before ? `${before.curl(base, call)}\n` : ""}${curl}` }];

  const apiKey = call.key === "sandbox" ? `apiKey: "${PUBLIC_SANDBOX_KEY}", ` : "";
  const keyNote = call.key === "personal" ? "// SVC_API_KEY: a personal test key from /get-test-key (the public sandbox key has no webhooks).\n" : call.operationId === "createTestKey" ? "// CHALLENGE_TOKEN: a challenge of client.testKeys.challenge() and its solution, `<challenge>:<nonce>`.\n" : "";
  const sdk = [
    'import { Client } from "@svc/sdk";',
    "",
    `${keyNote}const client = new Client({ ${apiKey}baseUrl: "${base}" });`,
    ...(before ? [before.sdk] : []),
    `const answer = await ${SDK_CALL[call.operationId]!(call)};`,
    "console.log(answer);",
  ].join("\n");
  samples.push({ lang: "JavaScript", label: "TypeScript SDK", source: sdk });

  const cli = CLI_COMMAND[call.operationId];
  if (cli) {
    const env = call.key === "sandbox" ? `export SVC_API_KEY=${PUBLIC_SANDBOX_KEY}\n` : call.key === "personal" ? `${PERSONAL_NOTE}\n` : "";
    samples.push({ lang: "Shell", label: "CLI", source: `${env}export SVC_BASE_URL=${base}\n${before?.cli ? `${before.cli}\n` : ""}${cli(call)}` });
  }
  const tool = MCP_TOOL_OF(call);
  if (tool) samples.push({ lang: "JSON", label: "MCP tool", source: `// tools/call of the svc-mcp server (docs/mcp.md), with the key in its SVC_API_KEY\n${JSON.stringify(tool, null, 2)}` });
  return samples;
}
