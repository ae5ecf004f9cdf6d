import { createHash } from "node:crypto";
import type { Request } from "express";
import { ApiError } from "@svc/contract";
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from "@svc/store";
import type { Caller, Deps, Reply } from "../context";

const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;
const TTL_MS = 24 * 3600 * 1000;
/** A request still "in progress" after this long is presumed dead and may be taken over. */
const LOCK_MS = 60 * 1000;
/** Headers worth replaying; everything else is regenerated per response. */
const REPLAYED_HEADERS = ["location", "retry-after", "x-request-id"];

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

export function requestHash(req: Request, routePath: string, body: unknown): string {
  return createHash("sha256").update(`${req.method} ${routePath}\n${canonicalJson(body ?? null)}`).digest("hex");
}

export function readIdempotencyKey(req: Request): string | undefined {
  const key = req.headers["idempotency-key"];
  if (key === undefined) return undefined;
  if (typeof key !== "string" || !KEY_PATTERN.test(key)) {
    throw new ApiError("invalid_request", { param: "Idempotency-Key", message: "Idempotency-Key must be 1 to 255 printable ASCII characters." });
  }
  return key;
}

/**
 * Runs `handle` at most once per (account, Idempotency-Key) within 24 hours.
 * Final answers (success or a non-retryable error) are stored and replayed with
 * `Idempotent-Replayed: true`; retryable errors are not stored, so the client's
 * retry with the same key runs again.
 */
export async function withIdempotency(
  deps: Deps,
  req: Request,
  caller: Caller,
  key: string,
  hash: string,
  handle: () => Promise<Reply>,
  renderError: (err: ApiError) => Reply,
): Promise<Reply> {
  const scope = { accountId: caller.accountId, key };
  const claim = await claimIdempotencyKey(deps.store.pool, { ...scope, requestHash: hash, now: deps.now(), lockMs: LOCK_MS, ttlMs: TTL_MS });
  if (claim.kind === "mismatch") throw new ApiError("idempotency_key_reused", { param: "Idempotency-Key" });
  if (claim.kind === "in_progress") throw new ApiError("idempotency_request_in_progress", { param: "Idempotency-Key", retryAfterSeconds: 1 });
  if (claim.kind === "replay") {
    return { status: claim.status, body: JSON.parse(claim.body.toString("utf8")), headers: { ...claim.headers, "Idempotent-Replayed": "true" } };
  }
  let reply: Reply;
  try {
    reply = await handle();
  } catch (err) {
    if (!(err instanceof ApiError) || err.retryable) {
      await releaseIdempotencyKey(deps.store.pool, caller.accountId, key).catch((e) => req.log.error({ err: e }, "could not release idempotency key"));
      throw err;
    }
    reply = renderError(err);
  }
  const headers: Record<string, string> = { "x-request-id": req.id };
  for (const [k, v] of Object.entries(reply.headers ?? {})) if (REPLAYED_HEADERS.includes(k.toLowerCase())) headers[k.toLowerCase()] = v;
  await completeIdempotencyKey(deps.store.pool, { ...scope, status: reply.status, headers, body: Buffer.from(JSON.stringify(reply.body ?? null)) });
  return reply;
}
