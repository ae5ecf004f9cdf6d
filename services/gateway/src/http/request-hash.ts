import { createHash } from "node:crypto";

/** Sorted-key JSON, so the same body re-serialised by a client hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What an Idempotency-Key is bound to: method, route and body. Pure, so bulk
 * bodies are hashed on the intake threads with the same result as small ones here.
 */
export function requestHash(method: string, routePath: string, body: unknown): string {
  return createHash("sha256").update(`${method} ${routePath}\n${canonicalJson(body ?? null)}`).digest("hex");
}
