import type { LogLevel } from "./config.js";

/** Anything shaped like an API key (prefix, 30 + 6 base62 characters). */
const KEY_SHAPE = /svc_(?:test|live|agent)_[0-9A-Za-z]{20,}/g;

/**
 * Removes the API key from text before it leaves the process (tool results, log
 * lines). The SDK already keeps the key out of its errors and logs; this is the
 * second line, so that no future message, stack or API answer can carry it out.
 * The key itself is held only in this closure.
 */
export function createRedactor(secret: string | undefined): (text: string) => string {
  const key = secret?.trim() || undefined;
  return (text) => {
    let out = key && key.length >= 8 ? text.split(key).join("[redacted]") : text;
    out = out.replace(KEY_SHAPE, "[redacted]");
    return out;
  };
}

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
