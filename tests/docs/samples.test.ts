import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { codeSamples, MCP_TOOL_OF, RECORDED_CALLS, ROUTES, type CodeSample, type RecordedCall } from "@svc/contract";
import { networkOf, PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { sandboxWindowKeys } from "../../services/gateway/src/http/rate-limit";
import { utcDay } from "../../services/gateway/src/time";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { accountWithKey } from "../support/fixtures";
import { resolveExampleHooks } from "../support/examples";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { startMcp } from "../mcp/harness";

/**
 * Every code sample of the reference (x-codeSamples, made by codeSamples() of
 * @svc/contract from the recorded examples) runs as a reader would run it, against a
 * test-mode gateway: the curl sample with `sh`, the SDK sample as an ES module importing
 * the built SDK, the CLI sample with the built `svc` on PATH, the MCP tool through the
 * built MCP server over stdio. Each must succeed.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SDK = path.join(ROOT, "packages", "sdk", "dist", "index.mjs");
const CLI = path.join(ROOT, "packages", "cli", "bin", "svc.js");
const run = promisify(execFile);


let gw: TestGateway;
let personalKey: string;
let dir: string;
let binDir: string;

beforeAll(async () => {
  gw = await startTestGateway({ resolveHost: resolveExampleHooks });
  personalKey = (await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "test", scopes: ["lookup:write", "jobs:write", "jobs:read", "account:read", "webhooks:manage"] })).key;
  dir = mkdtempSync(path.join(tmpdir(), "svc-samples-"));
  binDir = path.join(dir, "bin");
  mkdirSync(binDir);
  symlinkSync(CLI, path.join(binDir, "svc"));
}, 60_000);
afterAll(async () => {
  await gw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * A reader runs one sample, not the whole reference in a minute: the public sandbox
 * key's per-address windows are emptied before each so the test does not trip them.
 */
async function freshSandboxWindows(): Promise<void> {
  // The samples run on loopback: its network in each form the socket may report.
  const keys = ["127.0.0.1", "::ffff:127.0.0.1", "::1"].flatMap((ip) => sandboxWindowKeys(gw.deps.config.REDIS_PREFIX, networkOf(ip), utcDay(new Date())));
  await gw.deps.redis.del(...keys);
}

/** A challenge token of a fresh challenge, solved (what /get-test-key does in the browser). */
async function challengeToken(): Promise<string> {
  const res = await gw.http().get("/v1/test-keys/challenge").set("X-Forwarded-For", "198.51.100.9");
  const { challenge, difficulty } = res.body as { challenge: string; difficulty: number };
  return `${challenge}:${solveChallenge(challenge, difficulty)}`;
}

/** The first successful recorded call of each operation: what its samples are made from. */
const firsts: RecordedCall[] = [];
for (const call of RECORDED_CALLS) if (call.status < 300 && !firsts.some((c) => c.operationId === call.operationId)) firsts.push(call);

const sampleOf = (call: RecordedCall, label: CodeSample["label"]) => codeSamples(call, gw.url).find((s) => s.label === label);

async function env(call: RecordedCall): Promise<NodeJS.ProcessEnv> {
  const extra: Record<string, string> = {};
  if (call.key === "personal") extra.SVC_API_KEY = personalKey;
  if (call.operationId === "createTestKey") extra.CHALLENGE_TOKEN = await challengeToken();
  return { PATH: `${binDir}:${process.env.PATH ?? ""}`, HOME: dir, ...extra };
}

/** The last JSON document a sample printed (curl's answer, or the CLI's --json). */
function lastJson(out: string): any {
  const start = out.lastIndexOf("\n{") >= 0 ? out.lastIndexOf("\n{") + 1 : out.indexOf("{");
  return JSON.parse(out.slice(start));
}

describe("the reference's code samples, run", () => {
  it("cover every operation with curl and the SDK, the CLI where it has a command, the MCP tool where there is one", () => {
    expect(ROUTES.map((r) => r.operationId).filter((id) => id !== "getOpenApi" && !firsts.some((c) => c.operationId === id))).toEqual([]);
    for (const call of firsts) {
      const labels = codeSamples(call, "http://localhost:8080").map((s) => s.label);
      expect([call.operationId, labels.slice(0, 2)]).toEqual([call.operationId, ["curl", "TypeScript SDK"]]);
    }
  });

  it.each(firsts.map((c) => [c.operationId, c] as const))("curl: %s answers as its example says", async (_id, call) => {
    await freshSandboxWindows();
    const sample = sampleOf(call, "curl")!;
    const { stdout } = await run("sh", ["-ec", sample.source], { cwd: dir, env: await env(call), timeout: 30_000 });
    if (call.contentType === "application/json") {
      const answer = lastJson(stdout);
      expect(answer.error).toBeUndefined();
      expect(Object.keys(answer).sort()).toEqual(Object.keys(call.response as object).sort());
    } else if (call.response === null) {
      expect(stdout).toBe("");
    } else {
      expect(stdout.split("\n")[0]).toBe(String(call.response).split("\n")[0]);
    }
  }, 40_000);

  it.each(firsts.map((c) => [c.operationId, c] as const))("TypeScript SDK: %s succeeds", async (_id, call) => {
    await freshSandboxWindows();
    const sample = sampleOf(call, "TypeScript SDK")!;
    const file = path.join(dir, `${call.operationId}.mjs`);
    writeFileSync(file, sample.source.replace('from "@svc/sdk"', `from ${JSON.stringify(SDK)}`));
    const { stdout } = await run(process.execPath, [file], { cwd: dir, env: await env(call), timeout: 30_000 });
    expect(stdout.length).toBeGreaterThan(0);
  }, 40_000);

  const withCli = firsts.filter((c) => codeSamples(c, "http://localhost:8080").some((s) => s.label === "CLI"));
  it.each(withCli.map((c) => [c.operationId, c] as const))("CLI: %s succeeds", async (_id, call) => {
    await freshSandboxWindows();
    const sample = sampleOf(call, "CLI")!;
    const output = /--output (\S+)/.exec(sample.source)?.[1];
    if (output) rmSync(path.join(dir, output), { force: true });
    const { stdout } = await run("sh", ["-ec", sample.source], { cwd: dir, env: await env(call), timeout: 60_000 });
    // What it printed, or the file it wrote (a download), the same as the example's answer begins.
    if (output) expect(readFileSync(path.join(dir, output), "utf8").split("\n")[0]).toBe(String(call.response).split("\n")[0]);
    else expect(stdout.length).toBeGreaterThan(0);
  }, 70_000);

  const withTool = firsts.filter((c) => MCP_TOOL_OF(c));
  it.each(withTool.map((c) => [c.operationId, c] as const))("MCP tool: %s succeeds", async (_id, call) => {
    await freshSandboxWindows();
    const tool = JSON.parse(sampleOf(call, "MCP tool")!.source.replace(/^\/\/.*\n/, "")) as { name: string; arguments: Record<string, unknown> };
    const key = call.key === "personal" ? personalKey : PUBLIC_SANDBOX_KEY;
    const mcp = await startMcp({ SVC_API_KEY: key, SVC_BASE_URL: gw.url });
    try {
      const args = { ...tool.arguments };
      // The sample's `lkp_…`/`job_…` stands for an id a previous tool call answered: made here first.
      if (args.id === "lkp_…") args.id = (await mcp.call("lookup", { numbers: ["+12025550107"], checks: ["whatsapp"], wait: 0 })).data.lookup.id;
      if (args.id === "job_…") args.id = (await mcp.call("create_job", { numbers: ["+12025550100", "+12025550101"], checks: ["number.spam"] })).data.job.id;
      const answer = await mcp.call(tool.name, args);
      expect([tool.name, answer.isError, answer.data.error]).toEqual([tool.name, false, undefined]);
    } finally {
      await mcp.close();
    }
  }, 60_000);
});
