import { spawnSync } from "node:child_process";
import { ScriptedServer } from "../sdk/scripted-server";
import { MCP_CLI, startMcp, type McpSession } from "./harness";

/**
 * The MCP server takes the SDK's rules (one implementation each): plain http to the
 * API only on loopback unless SVC_ALLOW_INSECURE_HTTP / --allow-insecure-http says
 * otherwise, and the key scrubbed from everything an API answer brings back.
 */
const KEY = "svc_agent_EchoedBackKey0123456789abcdefABCDEF";
const KEY_BODY = KEY.slice("svc_agent_".length);

/** Starts the stdio server with stdin at end of file: it comes up, then stops at once (exit 0), or refuses to start. */
function startOnce(env: Record<string, string>, args: string[] = []) {
  const res = spawnSync(process.execPath, [MCP_CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", SVC_API_KEY: KEY, SVC_MCP_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    timeout: 10_000,
  });
  return { status: res.status, stderr: res.stderr, ready: res.stderr.includes('"msg":"svc-mcp ready"') };
}

describe("SVC_BASE_URL: plain http only to loopback", () => {
  it("refuses http to another host at start-up (exit 2), naming the way to allow it, never the key", () => {
    for (const url of ["http://api.example.com", "http://10.1.2.3:8080"]) {
      const r = startOnce({ SVC_BASE_URL: url });
      expect(r.status).toBe(2);
      expect(r.ready).toBe(false);
      expect(r.stderr).toContain("Refusing plain http");
      expect(r.stderr).toContain("SVC_ALLOW_INSECURE_HTTP=1 or --allow-insecure-http");
      expect(r.stderr).not.toContain(KEY);
    }
  });

  it("starts for https anywhere and for http on loopback", () => {
    for (const url of ["https://api.example.com", "http://127.0.0.1:9", "http://localhost:8080", "http://[::1]:8080"]) {
      const r = startOnce({ SVC_BASE_URL: url });
      expect([url, r.status, r.ready]).toEqual([url, 0, true]);
      expect(r.stderr).not.toContain("unencrypted");
    }
  });

  it("SVC_ALLOW_INSECURE_HTTP=1 or --allow-insecure-http allows it, with a warning; a value that is not a yes or a no stops it", () => {
    for (const [env, args] of [[{ SVC_ALLOW_INSECURE_HTTP: "1" }, []], [{ SVC_ALLOW_INSECURE_HTTP: "true" }, []], [{}, ["--allow-insecure-http"]]] as const) {
      const r = startOnce({ SVC_BASE_URL: "http://api.internal:8080", ...env }, [...args]);
      expect(r.status).toBe(0);
      expect(r.ready).toBe(true);
      expect(r.stderr).toContain("the API key crosses the network unencrypted");
    }
    const bad = startOnce({ SVC_BASE_URL: "http://api.internal:8080", SVC_ALLOW_INSECURE_HTTP: "yes" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("SVC_ALLOW_INSECURE_HTTP must be 1 or true");
  });
});

describe("an API answer that echoes the key", () => {
  const server = new ScriptedServer();
  let mcp: McpSession;
  beforeAll(async () => {
    await server.start();
    mcp = await startMcp({ SVC_API_KEY: KEY, SVC_BASE_URL: server.url });
  });
  afterAll(async () => {
    await mcp?.close();
    await server.close();
  });

  it("reaches the agent and the log scrubbed: the key, its random part alone, and the Authorization header", async () => {
    server.script((_n, req) => ({
      status: 401,
      json: {
        error: {
          code: "unauthorized",
          message: `Key refused; you sent Authorization: ${String(req.headers.authorization)}`,
          status: 401,
          retryable: false,
          param: null,
          suggestion: `The key's secret part ${KEY_BODY} is unknown.`,
        },
      },
    }));
    const r = await mcp.call("get_account");
    expect(r.data.error).toMatchObject({ code: "unauthorized", status: 401 });
    // The server's own sentence for unauthorized replaces the message; the suggestion is the API's, scrubbed.
    expect(r.data.error.suggestion).toBe("The key's secret part [redacted] is unknown.");

    server.script((_n, req) => ({
      status: 400,
      json: { error: { code: "invalid_request", message: `Bad request from ${String(req.headers.authorization)} (${KEY_BODY})`, status: 400, retryable: false, param: "checks[0]" } },
    }));
    const bad = await mcp.call("get_lookup", { id: "lkp_x" });
    expect(bad.data.error).toMatchObject({ code: "invalid_request", message: "Bad request from Bearer [redacted] ([redacted])" });

    expect(server.requests.every((q) => q.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(mcp.transcript() + mcp.stderr()).not.toContain(KEY_BODY);
  });
});
