import { ALLOW_INSECURE_HTTP_ENV, API_KEY_ENV, apiKeyMode, BASE_URL_ENV, formatAmount, parseAllowInsecureHttp, parseAmount } from "@svc/sdk";

/** Above this maximum cost (USD) a paying tool call needs `confirm_max_cost`. */
export const CONFIRM_ABOVE_ENV = "SVC_MCP_CONFIRM_ABOVE";
export const DEFAULT_CONFIRM_ABOVE = "1.00";
/** A paying tool call covering more numbers than this needs `confirm_max_cost`, whatever it costs (the spec's fixed rule). */
export const CONFIRM_NUMBERS_ABOVE = 100;
/** Bearer token the streamable HTTP transport requires. */
export const HTTP_TOKEN_ENV = "SVC_MCP_HTTP_TOKEN";
export const LOG_LEVEL_ENV = "SVC_MCP_LOG_LEVEL";
/** Seconds a confirmation token stays valid (default 300). */
export const CONFIRM_TTL_ENV = "SVC_MCP_CONFIRM_TTL_SECONDS";
export const DEFAULT_CONFIRM_TTL_SECONDS = 300;
/** `1`/`true`: let SVC_BASE_URL be plain http to a host that is not loopback (the SDK's `allowInsecureHttp`). */
export { ALLOW_INSECURE_HTTP_ENV };

/** What the key is, from its documented prefix (never the key itself). */
export type KeyKind = "test" | "live" | "agent" | "unknown" | "none";

export type LogLevel = "silent" | "error" | "warn" | "info" | "debug";
const LEVELS: readonly LogLevel[] = ["silent", "error", "warn", "info", "debug"];

export interface McpConfig {
  /** Maximum cost, in micro-dollars, a paying call may reach without `confirm_max_cost`. */
  confirmAboveMicros: bigint;
  keyKind: KeyKind;
  /** SVC_BASE_URL, else the SDK's default. */
  baseUrl: string | undefined;
  /** SVC_ALLOW_INSECURE_HTTP or --allow-insecure-http: plain http to a non-loopback API (the key crosses the network in clear). */
  allowInsecureHttp: boolean;
  /** How long a confirmation token stays valid, in ms (SVC_MCP_CONFIRM_TTL_SECONDS). */
  confirmTtlMs: number;
  logLevel: LogLevel;
}

export class ConfigError extends Error {}

/**
 * Reads the environment once at start-up; a bad value stops the server with a
 * message naming the variable (the key's value is never part of a message).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): McpConfig {
  const rawThreshold = env[CONFIRM_ABOVE_ENV]?.trim() || DEFAULT_CONFIRM_ABOVE;
  const confirmAboveMicros = parseAmount(rawThreshold);
  if (confirmAboveMicros === null) throw new ConfigError(`${CONFIRM_ABOVE_ENV} must be an amount in USD with at most 6 decimals, e.g. 1.00`);
  const level = (env[LOG_LEVEL_ENV]?.trim().toLowerCase() || "info") as LogLevel;
  if (!LEVELS.includes(level)) throw new ConfigError(`${LOG_LEVEL_ENV} must be one of ${LEVELS.join(", ")}`);
  let allowInsecureHttp: boolean;
  try {
    allowInsecureHttp = parseAllowInsecureHttp(env[ALLOW_INSECURE_HTTP_ENV]);
  } catch {
    throw new ConfigError(`${ALLOW_INSECURE_HTTP_ENV} must be 1 or true (allow), 0 or false (the default: plain http only to loopback)`);
  }
  const rawTtl = env[CONFIRM_TTL_ENV]?.trim() || String(DEFAULT_CONFIRM_TTL_SECONDS);
  const ttl = /^\d{1,4}$/.test(rawTtl) ? Number(rawTtl) : NaN;
  if (!(ttl >= 1 && ttl <= 3600)) throw new ConfigError(`${CONFIRM_TTL_ENV} must be a whole number of seconds from 1 to 3600`);
  return {
    confirmAboveMicros,
    keyKind: keyKindOf(env[API_KEY_ENV]),
    baseUrl: env[BASE_URL_ENV]?.trim() || undefined,
    allowInsecureHttp,
    confirmTtlMs: ttl * 1000,
    logLevel: level,
  };
}

/** test keys are priced at test prices (0); live and agent keys at live prices. */
export function keyKindOf(key: string | undefined): KeyKind {
  const k = key?.trim();
  if (!k) return "none";
  return apiKeyMode(k) ?? "unknown";
}

export const thresholdText = (config: McpConfig): string => formatAmount(config.confirmAboveMicros);
