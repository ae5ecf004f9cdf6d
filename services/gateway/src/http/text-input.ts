import { ApiError } from "@svc/contract";

/** Deeper than any request body the API defines; bounds the walks below and the idempotency hash. */
const MAX_DEPTH = 32;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Text Postgres can store: no NUL character and no unpaired UTF-16 surrogate. */
export function isStorableText(s: string): boolean {
  return !s.includes("\u0000") && !LONE_SURROGATE.test(s);
}

/**
 * Refuses input the schema cannot express: JSON nested deeper than `MAX_DEPTH`, or a
 * string (value or key) Postgres would reject. Iterative, so no input can exhaust
 * the stack. The error names where, never what.
 */
export function assertStorableInput(value: unknown, where: "body" | "query" | "path"): void {
  const pending: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  while (pending.length > 0) {
    const { v, depth } = pending.pop() as { v: unknown; depth: number };
    if (typeof v === "string") {
      if (!isStorableText(v)) throw new ApiError("invalid_request", { message: `The request ${where} contains a NUL character or invalid Unicode.` });
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (depth >= MAX_DEPTH) throw new ApiError("invalid_request", { message: `The request ${where} is nested too deeply.` });
    if (Array.isArray(v)) {
      for (const item of v) pending.push({ v: item, depth: depth + 1 });
      continue;
    }
    for (const [k, item] of Object.entries(v)) pending.push({ v: k, depth: depth + 1 }, { v: item, depth: depth + 1 });
  }
}
