import { readFileSync } from "node:fs";
import path from "node:path";
import { ALLOW_INSECURE_HTTP_ENV, API_KEY_ENV, apiKeyMode, BASE_URL_ENV, Client, InvalidArgumentError, parseAllowInsecureHttp, SDK_VERSION, type Logger } from "@svc/sdk";
import type { Command } from "commander";
import { addSecret, err } from "./output";

/** The CLI's own version, from its package.json (one source of truth). */
export const CLI_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();

/** Options every command accepts (defined once on the program). */
export interface GlobalOptions {
  json?: boolean;
  verbose?: boolean;
  baseUrl?: string;
  allowInsecureHttp?: boolean;
  timeout?: number;
}

export const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;

/** The key is in the environment only: it is registered for redaction before anything can print. */
addSecret(process.env[API_KEY_ENV]);

/**
 * `--verbose`: one line per HTTP attempt, retry and answer on stderr. The SDK's log
 * fields never include the key or any header; they go through `redact` all the same.
 */
const verboseLogger: Logger = {
  debug: (message, fields) => err(`svc: ${message} ${JSON.stringify(fields)}`),
  warn: (message, fields) => err(`svc: warning: ${message} ${JSON.stringify(fields)}`),
};

/** The SDK client for a command (the key from SVC_API_KEY; never from an argument, which `ps` would show). */
export function client(cmd: Command): Client {
  const g = globals(cmd);
  let c: Client;
  try {
    c = new Client({
      baseUrl: g.baseUrl,
      // The SDK's rule: plain http only to loopback, unless asked for by flag or environment.
      allowInsecureHttp: g.allowInsecureHttp === true || parseAllowInsecureHttp(process.env[ALLOW_INSECURE_HTTP_ENV]),
      timeoutMs: g.timeout,
      logger: g.verbose ? verboseLogger : undefined,
      headers: { "User-Agent": `svc-cli/${CLI_VERSION} svc-sdk-js/${SDK_VERSION} node/${process.versions.node}` },
    });
  } catch (e) {
    // Same refusal (invalid_argument, exit 2), naming what svc's user can set instead of the SDK option.
    if (e instanceof InvalidArgumentError && e.param === "baseUrl" && /plain http/.test(e.message)) {
      throw new InvalidArgumentError("baseUrl", `${e.message.replace(/ To send it over http anyway.*$/, "")} To send it over http anyway (a network you trust), add --allow-insecure-http or set ${ALLOW_INSECURE_HTTP_ENV}=1.`);
    }
    throw e;
  }
  if (g.verbose) {
    const key = process.env[API_KEY_ENV]?.trim();
    const mode = key ? (apiKeyMode(key) ?? "unrecognised") : null;
    err(`svc: ${CLI_VERSION} (sdk ${SDK_VERSION}), API ${c.baseUrl}${process.env[BASE_URL_ENV] && !g.baseUrl ? ` (from ${BASE_URL_ENV})` : ""}`);
    err(`svc: API key: ${key ? `from ${API_KEY_ENV} (${mode} key)` : `none (${API_KEY_ENV} is not set)`}`);
  }
  return c;
}
