import type { LogLevel } from "./config.js";

/**
 * Removes the API key from text before it leaves the process (tool results, log
 * lines): the SDK's scrubber (`@svc/sdk` createRedactor: the key itself, its random
 * part, and anything key-shaped), the same rule the SDK applies to its own errors.
 * This is the second line, so that no future message, stack or API answer can carry
 * the key out.
 */
export { createRedactor } from "@svc/sdk";

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

export interface Log {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON line per event on stderr (stdout is the MCP channel in stdio mode).
 * Callers log names, codes, counts and ids, never arguments: numbers and e-mail
 * addresses are personal data and stay out of logs.
 */
export function createLog(level: LogLevel, redact: (text: string) => string, write: (line: string) => void = (l) => void process.stderr.write(l)): Log {
  const emit = (at: Exclude<LogLevel, "silent">) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[at] > ORDER[level]) return;
    let line: string;
    try {
      line = JSON.stringify({ time: new Date().toISOString(), level: at, msg, ...fields });
    } catch {
      line = JSON.stringify({ time: new Date().toISOString(), level: at, msg });
    }
    write(`${redact(line)}\n`);
  };
  return { error: emit("error"), warn: emit("warn"), info: emit("info"), debug: emit("debug") };
}
