import { API_KEY_MODES, API_KEY_PATTERN, API_KEY_PREFIX_PATTERN, API_KEY_PREFIX_SOURCE } from "./contract";
import { InvalidArgumentError } from "./errors";

/**
 * The safety rules every client of the API shares (the SDK, the CLI and the MCP
 * server import them from here, so there is one implementation of each):
 *
 * - what counts as a loopback host, the only place the key may travel over plain http;
 * - what an API key looks like (the contract's pattern, the one the gateway parses
 *   keys with) and how it is scrubbed from text that leaves the process.
 *
 * No `node:` imports: the SDK's core also runs in browsers, Deno and Bun.
 */

/**
 * The environment variable the CLI and the MCP server read to allow plain http beyond
 * loopback. The SDK itself never reads it: a library caller opts in explicitly with
 * `allowInsecureHttp: true`, so no environment can downgrade a program silently.
 */
export const ALLOW_INSECURE_HTTP_ENV = "SVC_ALLOW_INSECURE_HTTP";

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Whether `host` names this machine: `localhost`, 127.0.0.0/8, `::1` (bracketed or
 * not) and the IPv4-mapped form of 127.0.0.0/8. A URL's `hostname` is already
 * normalised by the URL parser (`127.1` → `127.0.0.1`, `[::ffff:127.0.0.1]` →
 * `[::ffff:7f00:1]`); a name like `127.example.com` is not loopback.
 */
export function isLoopbackHost(host: string): boolean {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  if (h === "localhost") return true;
  const v4 = IPV4.exec(h);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255) && Number(v4[1]) === 127;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const mapped = /^::ffff:(.+)$/.exec(h)?.[1];
  if (mapped) return /^7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(mapped) || isLoopbackHost(mapped);
  return false;
}

/**
 * The rule for a base URL: https anywhere; plain http only to a loopback host, since
 * the key travels in the Authorization header of every request and anyone on the
 * path could read it. `allowInsecureHttp` is the caller's explicit opt-out (a private
 * network the caller trusts). Throws `invalid_argument` (param `baseUrl`).
 */
export function assertSecureBaseUrl(url: URL, allowInsecureHttp: boolean): void {
  if (url.protocol !== "http:" || allowInsecureHttp || isLoopbackHost(url.hostname)) return;
  throw new InvalidArgumentError(
    "baseUrl",
    `Refusing plain http to ${url.hostname}: the API key would cross the network unencrypted. Use https, or a loopback address (localhost, 127.0.0.0/8, ::1). ` +
      "To send it over http anyway (a network you trust), pass allowInsecureHttp: true.",
  );
}

/**
 * `SVC_ALLOW_INSECURE_HTTP` as the CLI and the MCP server read it: unset, empty, `0`
 * or `false` → no; `1` or `true` → yes; anything else is a mistake worth stopping for.
 */
export function parseAllowInsecureHttp(value: string | undefined): boolean {
  const v = value?.trim().toLowerCase() ?? "";
  if (v === "" || v === "0" || v === "false") return false;
  if (v === "1" || v === "true") return true;
  throw new InvalidArgumentError(ALLOW_INSECURE_HTTP_ENV, `${ALLOW_INSECURE_HTTP_ENV} must be 1/true or 0/false.`);
}

// API_KEY_PATTERN: a whole key by its shape, `svc_<mode>_` + 30 base62 characters + a
// 6-character checksum (groups: mode, body, checksum); only the API knows whether a key
// is valid. API_KEY_PREFIX_PATTERN: a string starting with the prefix (group 1: mode).
export { API_KEY_PATTERN, API_KEY_PREFIX_PATTERN };

/** The kind of key its prefix names: `test`, `live` or `agent`. */
export type ApiKeyMode = (typeof API_KEY_MODES)[number];

/** The mode a key's documented prefix names (`svc_live_…` → `live`), or null when it has none. Never the key itself. */
export function apiKeyMode(key: string | undefined): ApiKeyMode | null {
  const m = key ? API_KEY_PREFIX_PATTERN.exec(key) : null;
  return m ? (m[1] as ApiKeyMode) : null;
}

/**
 * Anything shaped like an API key: the documented prefix, then at least 20 base62
 * characters (looser than a whole key on purpose: a truncated or mistyped key is
 * scrubbed too). Group 1 is the prefix, which is kept.
 */
const KEY_SHAPE = new RegExp(`(${API_KEY_PREFIX_SOURCE})[0-9A-Za-z]{20,}`, "g");
const REDACTED = "[redacted]";

/**
 * Removes secrets from text: each secret given (at least 8 characters), and for an
 * API key also its random part without the prefix, becomes `[redacted]`; then
 * anything else shaped like a key keeps its prefix (which only says test, live or
 * agent) and loses the rest (`svc_live_[redacted]`).
 */
export function redactSecrets(text: string, secrets: Iterable<string | undefined> = []): string {
  let out = text;
  for (const raw of secrets) {
    const s = raw?.trim();
    if (!s || s.length < 8) continue;
    if (out.includes(s)) out = out.split(s).join(REDACTED);
    const body = s.replace(API_KEY_PREFIX_PATTERN, "");
    if (body !== s && body.length >= 20 && out.includes(body)) out = out.split(body).join(REDACTED);
  }
  return out.replace(KEY_SHAPE, `$1${REDACTED}`);
}

/** A scrubber bound to fixed secrets (the process's API key): `redactSecrets` with them. */
export function createRedactor(...secrets: Array<string | undefined>): (text: string) => string {
  const kept = secrets.map((s) => s?.trim()).filter((s): s is string => !!s && s.length >= 8);
  return (text) => redactSecrets(text, kept);
}

/** Every string inside a JSON-like value scrubbed (API error bodies). */
export function redactDeep<T>(value: T, scrub: (text: string) => string): T {
  if (typeof value === "string") return scrub(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, scrub)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[scrub(k)] = redactDeep(v, scrub);
    return out as T;
  }
  return value;
}
