import type { Resolve } from "@svc/webhooks";

/**
 * What the documentation's examples share with the tests that check them: the host name
 * their webhook endpoint uses, resolved to a public address (tests never ask a real
 * resolver), and the comparison of an answer with the one a document shows.
 */
export const EXAMPLE_HOOKS_HOST = "hooks.example.com";

export const resolveExampleHooks: Resolve = async (host) => {
  if (host === EXAMPLE_HOOKS_HOST) return ["93.184.215.14"];
  throw new Error("ENOTFOUND");
};

/** Fields whose values differ on every call, compared by presence only. */
const VOLATILE_FIELDS = new Set(["challenge", "secret", "key", "next_cursor", "latency_ms", "uptime_seconds", "expires_at"]);

/** An answer with what differs on every call (ids, times, secrets, cursors) replaced by its kind. */
export function masked(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => masked(v, key));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, k)]));
  if (VOLATILE_FIELDS.has(key) && value !== null) return `<${key}>`;
  if (typeof value !== "string") return value;
  return value.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>").replace(/\b(lkp|job|req|acct|key|we|evt|tkr)_[A-Za-z0-9]+/g, "$1_<id>");
}
