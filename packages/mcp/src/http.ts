import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isLoopbackHost } from "@svc/sdk";
import type { Log } from "./log.js";

export interface HttpOptions {
  /** Interface to bind; default in the CLI is 127.0.0.1 (loopback only). */
  host: string;
  port: number;
  /** Every request must carry `Authorization: Bearer <token>`. */
  token: string;
  /** Host header values accepted (DNS-rebinding guard); for a loopback bind the loopback names are always accepted. */
  allowedHosts?: string[];
  /** A fresh MCP server per request (stateless transport). */
  newServer: () => McpServer;
  log: Log;
}

export interface RunningHttp {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export const MIN_TOKEN_LENGTH = 24;

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
  // Digests of equal length, compared in constant time: the token's length leaks nothing either.
  return m !== null && timingSafeEqual(digest(m[1] as string), expected);
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/**
 * MCP over streamable HTTP, stateless: each POST gets its own server and transport
 * (no sessions to hold or leak), JSON answers, no standalone SSE stream. Anyone
 * holding the token acts with the server's API key, so it binds to loopback unless
 * told otherwise and refuses requests without the token (401) or with a Host
 * header it does not expect (403, DNS rebinding).
 */
export async function startHttp(o: HttpOptions): Promise<RunningHttp> {
  if (o.token.length < MIN_TOKEN_LENGTH) throw new Error(`the HTTP token must be at least ${MIN_TOKEN_LENGTH} characters`);
  const expected = digest(o.token);
  const allowedHosts: string[] = [...(o.allowedHosts ?? [])];
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "/").split("?")[0];
      if (path !== "/mcp") return reply(res, 404, { error: { code: "not_found", message: "The MCP endpoint is POST /mcp." } });
      if (!authorized(req, expected)) return reply(res, 401, { error: { code: "unauthorized", message: "Send Authorization: Bearer <SVC_MCP_HTTP_TOKEN>." } }, { "WWW-Authenticate": 'Bearer realm="svc-mcp"' });
      if (req.method !== "POST") {
        return reply(res, 405, { jsonrpc: "2.0", error: { code: -32000, message: "This server is stateless: POST JSON-RPC messages to /mcp." }, id: null }, { Allow: "POST" });
      }
      const mcp = o.newServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, enableDnsRebindingProtection: allowedHosts.length > 0, allowedHosts });
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      o.log.error("http request failed", { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) reply(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: "Internal error" }, id: null });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  if (isLoopbackHost(o.host)) allowedHosts.push(`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`);
  const shown = o.host.includes(":") ? `[${o.host}]` : o.host;
  return {
    url: `http://${shown}:${port}/mcp`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
