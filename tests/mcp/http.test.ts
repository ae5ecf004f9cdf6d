import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { MCP_CLI } from "./harness";

/**
 * `svc-mcp --http`: streamable HTTP on loopback, every request needing the bearer
 * token, driven by the official client's StreamableHTTPClientTransport.
 */
const TOKEN = "mcp-http-token-0123456789abcdef0123456789";
let gw: TestGateway;
let k: TestKey;
let child: ChildProcess;
let stderr = "";
let url: string;

beforeAll(async () => {
  gw = await startTestGateway();
  k = await accountWithKey(gw.store, gw.env.keyHashSecret);
  child = spawn(process.execPath, [MCP_CLI, "--http", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", SVC_API_KEY: k.key, SVC_BASE_URL: gw.url, SVC_MCP_HTTP_TOKEN: TOKEN, SVC_MCP_LOG_LEVEL: "debug" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 10_000);
    child.stderr?.on("data", () => {
      const m = /"msg":"svc-mcp ready".*"url":"([^"]+)"/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
  });
}, 30_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
  await gw?.close();
});

/** A raw request, with any Host header (fetch would not send a foreign one). */
function raw(method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
      let b = "";
      res.on("data", (c) => (b += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
const INIT = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });

describe("svc-mcp --http", () => {
  it("binds to loopback by default", () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("the official client lists the tools and makes a cheap call with the bearer token", async () => {
    const client = new Client({ name: "http-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(8);
    const r = (await client.callTool({ name: "lookup", arguments: { numbers: ["+12025550100"], checks: ["spam"] } })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ lookup: { status: "completed", livemode: false }, cost: { max_cost_sent: "1.00" } });
    const confirm = (await client.callTool({ name: "create_job", arguments: { numbers: Array.from({ length: 101 }, (_, i) => `+1415555${2000 + i * 3}`), checks: ["spam"] } })) as CallToolResult;
    expect(confirm.isError).toBe(true);
    expect(JSON.parse((confirm.content[0] as { text: string }).text).error).toMatchObject({ code: "confirmation_required", numbers: 101 });
    await client.close();
  });

  it("a confirmation issued while answering one request is accepted by the next (each request has its own server; the tokens are the process's), once", async () => {
    const client = new Client({ name: "http-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const error = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text).error;
    const args = { numbers: Array.from({ length: 102 }, (_, i) => `+1415555${3000 + i * 3}`), checks: ["spam"] };
    const quoted = (await client.callTool({ name: "create_job", arguments: args })) as CallToolResult;
    const send = error(quoted).confirm.arguments;
    const created = (await client.callTool({ name: "create_job", arguments: { ...args, ...send } })) as CallToolResult;
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ job: { status: "completed" }, cost: { confirmed: true, max_cost_sent: "0.00" } });
    const reused = (await client.callTool({ name: "create_job", arguments: { ...args, ...send } })) as CallToolResult;
    expect(error(reused)).toMatchObject({ code: "confirmation_invalid", reason: "already_used" });
    await client.close();
  });

  it("refuses requests without the token, with another token, or for another Host (DNS rebinding); only POST", async () => {
    const none = await raw("POST", {}, INIT);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Bearer");
    expect((await raw("POST", { authorization: `Bearer ${TOKEN}x` }, INIT)).status).toBe(401);
    expect((await raw("POST", { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }, INIT)).status).toBe(401);
    const rebound = await raw("POST", { authorization: `Bearer ${TOKEN}`, host: `attacker.example:${new URL(url).port}` }, INIT);
    expect(rebound.status).toBe(403);
    expect((await raw("GET", { authorization: `Bearer ${TOKEN}` })).status).toBe(405);
    const good = await raw("POST", { authorization: `Bearer ${TOKEN}` }, INIT);
    expect(good.status).toBe(200);
    expect(JSON.parse(good.body).result.serverInfo.name).toBe("svc-mcp");
  });

  it("will not start without a token of at least 24 characters", () => {
    for (const token of [undefined, "short"]) {
      const res = spawnSync(process.execPath, [MCP_CLI, "--http", "--port", "0"], {
        env: { PATH: process.env.PATH ?? "", SVC_API_KEY: k.key, ...(token ? { SVC_MCP_HTTP_TOKEN: token } : {}) },
        encoding: "utf8",
        timeout: 10_000,
      });
      expect(res.status).toBe(2);
      expect(res.stderr).toContain("SVC_MCP_HTTP_TOKEN");
      expect(res.stderr).not.toContain(k.key);
    }
  });

  it("prints neither the API key nor the token", () => {
    expect(stderr).toContain('"tool call"');
    expect(stderr).not.toContain(k.key);
    expect(stderr).not.toContain(TOKEN);
  });
});
