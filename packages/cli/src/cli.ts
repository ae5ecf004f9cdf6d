import { CommanderError } from "commander";
import { APIError, SvcError } from "@svc/sdk";
import { EXIT, exitCodeFor, UsageError } from "./exit-codes";
import { err, flushStdout } from "./output";
import { buildProgram } from "./program";

/**
 * `svc`: parses the command line, runs the command, and turns whatever went wrong
 * into one message on stderr and a documented exit code. Nothing reaches the
 * terminal except through the redacting writers in output.ts, including crashes.
 */
const argv = process.argv.slice(2);
const wantsJson = argv.includes("--json");
const verbose = argv.includes("--verbose");

function report(error: unknown): number {
  const code = exitCodeFor(error);
  if (wantsJson) {
    err(JSON.stringify({ error: errorObject(error) }));
  } else if (error instanceof APIError) {
    const lines = [`svc: error: ${error.message}`, `  code: ${error.code} (HTTP ${error.status})${error.param ? `, param: ${error.param}` : ""}${error.retryable ? ", retryable" : ""}`];
    if (error.suggestion) lines.push(`  suggestion: ${error.suggestion}`);
    if (error.requestId) lines.push(`  request id: ${error.requestId} (quote it to support)`);
    if (error.docUrl) lines.push(`  docs: ${error.docUrl}`);
    err(lines.join("\n"));
  } else if (error instanceof SvcError) {
    err(`svc: error: ${error.message}${error.code === "missing_api_key" ? "" : ` (${error.code})`}`);
  } else if (error instanceof UsageError) {
    err(`svc: ${error.message}\n(add --help for usage)`);
  } else {
    err(`svc: internal error: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (verbose && error instanceof Error && !(error instanceof UsageError)) err(String(error.stack));
  return code;
}

/** `--json` errors: the API's own error object; client-side failures in the same shape. */
function errorObject(error: unknown): Record<string, unknown> {
  if (error instanceof APIError && error.body) return error.body;
  if (error instanceof SvcError) return { code: error.code, message: error.message, status: error.status, retryable: error.retryable, param: error.param, request_id: error.requestId };
  if (error instanceof UsageError) return { code: "usage_error", message: error.message, status: null, retryable: false, param: null, request_id: null };
  return { code: "internal_error", message: error instanceof Error ? error.message : String(error), status: null, retryable: false, param: null, request_id: null };
}

async function main(): Promise<number> {
  try {
    await buildProgram(wantsJson).parseAsync(process.argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end in "errors" with exit code 0; commander printed the rest itself.
      if (error.exitCode === 0) return EXIT.ok;
      if (wantsJson) err(JSON.stringify({ error: { code: "usage_error", message: error.message.replace(/^error: /, ""), status: null, retryable: false, param: null, request_id: null } }));
      return EXIT.usage;
    }
    return report(error);
  }
}

// Crashes too go through the redacting writer, never Node's default printer.
process.on("uncaughtException", (error) => process.exit(report(error)));
process.on("unhandledRejection", (error) => process.exit(report(error)));

main().then(async (code) => {
  await flushStdout();
  process.exit(code);
});
