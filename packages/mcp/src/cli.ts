#!/usr/bin/env node
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { API_KEY_ENV, Client, InvalidArgumentError, isLoopbackHost } from "@svc/sdk";
import { ALLOW_INSECURE_HTTP_ENV, ConfigError, CONFIRM_TTL_ENV, DEFAULT_CONFIRM_TTL_SECONDS, HTTP_TOKEN_ENV, loadConfig, thresholdText } from "./config.js";
import { ConfirmationBook } from "./confirmation-token.js";
import { MIN_TOKEN_LENGTH, startHttp } from "./http.js";
import { createLog, createRedactor, type Log } from "./log.js";
import { createMcpServer } from "./server.js";
import { MCP_VERSION } from "./version.js";

const USAGE = `svc-mcp ${MCP_VERSION}: MCP server for the phone and e-mail validation API

Usage:
  svc-mcp                      serve MCP over stdio (what MCP clients launch)
  svc-mcp --http [--port 8765] [--host 127.0.0.1] [--allowed-hosts h:p,...]
                               serve MCP over streamable HTTP at /mcp; needs ${HTTP_TOKEN_ENV}
  --allow-insecure-http        let SVC_BASE_URL be plain http to a host that is not loopback
                               (the key then crosses the network unencrypted); same as ${ALLOW_INSECURE_HTTP_ENV}=1

Environment:
  ${API_KEY_ENV}                  the API key (an agent key, svc_agent_..., is recommended); never printed
  SVC_BASE_URL                 the API's base URL (default http://localhost:8080); https, or http to loopback only
  ${ALLOW_INSECURE_HTTP_ENV}      1 or true: accept plain http to a host that is not loopback
  SVC_MCP_CONFIRM_ABOVE        confirmation threshold in USD (default 1.00)
  ${CONFIRM_TTL_ENV}  seconds a confirmation token stays valid (default ${DEFAULT_CONFIRM_TTL_SECONDS})
  ${HTTP_TOKEN_ENV}           bearer token for --http (at least ${MIN_TOKEN_LENGTH} characters)
  SVC_MCP_LOG_LEVEL            silent|error|warn|info|debug (default info; logs go to stderr)

Docs: docs/mcp.md`;

function exitWith(code: number, message: string): never {
  process.stderr.write(`svc-mcp: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let flags;
  try {
    flags = parseArgs({
      options: {
        http: { type: "boolean", default: false },
        host: { type: "string", default: "127.0.0.1" },
        port: { type: "string", default: "8765" },
        "allowed-hosts": { type: "string" },
        "allow-insecure-http": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
        version: { type: "boolean", short: "v", default: false },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    exitWith(2, `${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
  }
  if (flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (flags.version) {
    process.stdout.write(`${MCP_VERSION}\n`);
    return;
  }

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) exitWith(2, err.message);
    throw err;
  }
  const redact = createRedactor(process.env[API_KEY_ENV]);
  const log = createLog(config.logLevel, redact);
  guardProcess(log);

  const allowInsecureHttp = config.allowInsecureHttp || flags["allow-insecure-http"] === true;
  let client: Client;
  try {
    client = new Client({ baseUrl: config.baseUrl, allowInsecureHttp, logger: { debug: (m, f) => log.debug(`sdk: ${m}`, f), warn: (m, f) => log.warn(`sdk: ${m}`, f) } });
  } catch (err) {
    // The SDK's rule (plain http only to loopback) names its option; the server's user sets a variable or a flag.
    const baseUrl = err instanceof InvalidArgumentError && err.param === "baseUrl";
    const hint = baseUrl && /plain http/.test(err.message) ? ` (for svc-mcp: ${ALLOW_INSECURE_HTTP_ENV}=1 or --allow-insecure-http)` : "";
    exitWith(2, `${baseUrl ? "SVC_BASE_URL: " : ""}${redact(err instanceof Error ? err.message : String(err))}${hint}`);
  }
  if (allowInsecureHttp && new URL(client.baseUrl).protocol === "http:" && !isLoopbackHost(new URL(client.baseUrl).hostname)) {
    log.warn("plain http to a host that is not loopback: the API key crosses the network unencrypted", { base_url: client.baseUrl });
  }
  if (config.keyKind === "none") log.warn(`${API_KEY_ENV} is not set: every tool except list_services will answer missing_api_key`);
  else if (config.keyKind === "live") log.warn("running with a live key: an agent key (svc_agent_...) with narrow scopes and a daily spend cap is the safer choice, see docs/mcp.md");
  else if (config.keyKind === "unknown") log.warn(`${API_KEY_ENV} does not look like an API key (svc_test_, svc_live_ or svc_agent_); the API will refuse it`);
  // One book for the process: with --http every request has its own server, and all of them share it.
  const deps = { config, client, log, redact, confirmations: new ConfirmationBook({ ttlMs: config.confirmTtlMs }) };
  const ready = { version: MCP_VERSION, base_url: client.baseUrl, key_kind: config.keyKind, confirm_above: thresholdText(config) };

  if (!flags.http) {
    const server = createMcpServer(deps);
    const transport = new StdioServerTransport();
    let stopping = false;
    const stop = async () => {
      if (stopping) return; // closing the server closes the transport, which calls back here
      stopping = true;
      await server.close().catch(() => undefined);
      process.exit(0);
    };
    transport.onclose = () => void stop();
    process.stdin.on("end", () => void stop());
    process.on("SIGINT", () => void stop());
    process.on("SIGTERM", () => void stop());
    await server.connect(transport);
    log.info("svc-mcp ready", { transport: "stdio", ...ready });
    return;
  }

  const token = process.env[HTTP_TOKEN_ENV]?.trim() ?? "";
  if (token.length < MIN_TOKEN_LENGTH) exitWith(2, `--http needs ${HTTP_TOKEN_ENV} (at least ${MIN_TOKEN_LENGTH} characters, e.g. from \`openssl rand -hex 32\`)`);
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) exitWith(2, "--port must be a port number (0 picks a free one)");
  const host = flags.host;
  const allowedHosts = flags["allowed-hosts"]?.split(",").map((h) => h.trim()).filter(Boolean) ?? [];
  if (!isLoopbackHost(host)) log.warn("listening beyond loopback: whoever holds the token spends with this server's API key; put TLS in front", { host });
  const http = await startHttp({ host, port, token, allowedHosts, newServer: () => createMcpServer(deps), log });
  log.info("svc-mcp ready", { transport: "http", url: http.url, ...ready });
  const stop = async () => {
    await http.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}

/**
 * stdout is the MCP channel in stdio mode: anything printed there by accident
 * would corrupt it, so console output goes to stderr, through the key's redaction.
 * An unexpected failure is logged (redacted) and ends the process.
 */
function guardProcess(log: Log): void {
  const toLog = (...args: unknown[]) => log.warn(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  console.log = toLog;
  console.info = toLog;
  console.debug = toLog;
  console.warn = toLog;
  console.error = toLog;
  process.on("uncaughtException", (err) => {
    log.error("uncaught exception", { error: `${err.name}: ${err.message}`, stack: err.stack });
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    log.error("unhandled rejection", { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    process.exit(1);
  });
}

main().catch((err: unknown) => {
  // The key never appears here: SDK errors never carry it, and the message is scrubbed anyway.
  const redact = createRedactor(process.env[API_KEY_ENV]);
  exitWith(1, redact(err instanceof Error ? err.message : String(err)));
});
