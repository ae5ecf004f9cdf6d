/**
 * Last line of defence for personal data and secrets in logs: whatever a caller
 * puts in a log line, API keys, webhook secrets, e-mail addresses and anything
 * shaped like a phone number are replaced before the line is written.
 */
const PATTERNS: Array<[RegExp, string]> = [
  // Credentials in any URL (postgresql://svc:pw@postgres:5432, redis+cluster://:pw@h:1,h:2),
  // whatever the host looks like: before the e-mail pattern, which would take only some.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*:[^\s/?#@]*@/gi, "$1[redacted]@"],
  [/svc_(test|live|agent)_[A-Za-z0-9]+/g, "svc_$1_[redacted]"],
  [/whsec_[A-Za-z0-9+/=]+/g, "whsec_[redacted]"],
  [/Bearer\s+\S+/gi, "Bearer [redacted]"],
  [/"[^"\n]{1,64}"@[^\s@"'<>(),;:]+\.[A-Za-z0-9-]+/g, "[email]"], // quoted local part: "john doe"@example.com
  // No brackets in an unquoted local part: a URL's "[redacted]@host" above stays as it is.
  [/[^\s@"'<>(),;:[\]]+@[^\s@"'<>(),;:]+\.[A-Za-z0-9-]+/g, "[email]"],
  // Seven or more digits, optionally separated (`+1 - 202 - 555 - 0100` too): phone
  // numbers (and, harmlessly, long digit runs).
  [/\+?\d(?:[\s().-]{0,3}\d){6,}/g, "[number]"],
];

/** Keys whose values are secrets whatever they hold (`apiKey`, `vendor_key`, `clientSecret`, `accessToken`…). */
const SECRET_WORD = /secret|passw(or)?d|token|api[_-]?key|authorization|cookie|credential/i;
const KEY_SUFFIX = /^key$|[_-]key$|[a-z]Key$/;
const isSecretKey = (name: string) => SECRET_WORD.test(name) || KEY_SUFFIX.test(name);

export function scrubText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Keys whose values are identifiers we generate and must stay readable. */
const SAFE_KEYS = new Set(["reqId", "requestId", "request_id", "time", "level", "pid", "hostname", "service", "jobId", "queue", "trace_id", "span_id"]);

export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return scrubText(value);
  if (value === null || typeof value !== "object") return value;
  // Not walked any deeper, so not written either: it could hold anything (or loop back on itself).
  if (depth > 6) return "[truncated]";
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  if (value instanceof Error) {
    return { type: value.name, message: scrubText(value.message), stack: value.stack ? scrubText(value.stack) : undefined };
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (SAFE_KEYS.has(k) && typeof v !== "object") out[k] = v;
    else if (isSecretKey(k) && v !== null && v !== undefined) out[k] = "[redacted]";
    else out[k] = scrubValue(v, depth + 1);
  }
  return out;
}
