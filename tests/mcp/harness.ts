import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";

/** The built server, started exactly as an MCP client configuration starts it. */
export const MCP_CLI = path.resolve(__dirname, "..", "..", "packages", "mcp", "dist", "cli.js");

export type ToolAnswer = {
  isError: boolean;
  /** structuredContent on success; the parsed `{ error }` text on failure. */
  data: Record<string, any>;
  raw: CallToolResult;
};

export type McpSession = {
  client: Client;
  call(name: string, args?: Record<string, unknown>, options?: { onprogress?: (p: Progress) => void }): Promise<ToolAnswer>;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Every text any tool result carried so far (for the key checks). */
  transcript(): string;
  close(): Promise<void>;
};

/**
 * The official MCP client (`Client` + `StdioClientTransport`) spawning the built
 * server as a child process with only the environment a client configuration
 * would give it.
 */
export async function startMcp(env: Record<string, string>): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_CLI],
    env: { PATH: process.env.PATH ?? "", SVC_MCP_LOG_LEVEL: "debug", ...env },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "svc-mcp-tests", version: "1.0.0" });
  await client.connect(transport);
  const texts: string[] = [];
  return {
    client,
    async call(name, args = {}, options = {}) {
      const raw = (await client.callTool({ name, arguments: args }, undefined, { onprogress: options.onprogress, timeout: 60_000 })) as CallToolResult;
      texts.push(JSON.stringify(raw));
      const text = raw.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      let data: Record<string, any>;
      if (!raw.isError) data = raw.structuredContent as Record<string, any>;
      else {
        try {
          data = JSON.parse(text);
        } catch {
          data = { error: { code: "unparsed", message: text } };
        }
      }
      return { isError: raw.isError === true, data, raw };
    },
    stderr: () => err,
    transcript: () => texts.join("\n"),
    close: () => client.close(),
  };
}

export type Recorded = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/**
 * A plain HTTP relay in front of the real gateway that writes down what the MCP
 * server sends (method, path, headers, body) and passes everything through
 * unchanged: how a test sees the `max_cost` and Idempotency-Key a tool call put on
 * the wire.
 */
export type Recorder = {
  url: string;
  requests: Recorded[];
  /**
   * Holds the next request to `method path` before passing it on: resolves `arrived`
   * when it comes in; it goes on, unchanged, when `release()` is called. How a test
   * makes something happen between the MCP server's decision and the API's answer.
   */
  hold(method: string, path: string): { arrived: Promise<void>; release(): void };
  /**
   * Loses the answers to `method path` until `stop()`: each request is passed on to
   * the gateway, which does the work and answers; the relay reads the whole answer,
   * then cuts the client's connection without writing it. A response lost on the way
   * back, on real sockets: the API acted, the caller cannot know. `lost` counts them.
   */
  loseAnswers(method: string, path: string): { readonly lost: number; stop(): void };
  close(): Promise<void>;
};

export async function startRecorder(target: string): Promise<Recorder> {
  const requests: Recorded[] = [];
  const holds: Array<{ method: string; path: string; arrive: () => void; released: Promise<void> }> = [];
  const losses: Array<{ method: string; path: string; lost: number }> = [];
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: body.toString("utf8") });
      const i = holds.findIndex((h) => h.method === req.method && h.path === (req.url ?? "").split("?")[0]);
      if (i >= 0) {
        const [h] = holds.splice(i, 1);
        h!.arrive();
        await h!.released;
      }
      const loss = losses.find((l) => l.method === req.method && l.path === (req.url ?? "").split("?")[0]);
      const out = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          if (loss) {
            // Read the gateway's whole answer (it has done the work), then drop the client's connection unanswered.
            up.resume();
            up.on("end", () => {
              loss.lost += 1;
              req.socket.destroy();
            });
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      out.on("error", () => res.destroy());
      out.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    hold(method, p) {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => (arrive = r));
      const released = new Promise<void>((r) => (release = r));
      holds.push({ method, path: p, arrive, released });
      return { arrived, release };
    },
    loseAnswers(method, p) {
      const loss = { method, path: p, lost: 0 };
      losses.push(loss);
      return {
        get lost() {
          return loss.lost;
        },
        stop() {
          const i = losses.indexOf(loss);
          if (i >= 0) losses.splice(i, 1);
        },
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const bodies = (requests: Recorded[], method: string, p: string) => requests.filter((r) => r.method === method && r.path.split("?")[0] === p).map((r) => JSON.parse(r.body));
