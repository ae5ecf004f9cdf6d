import type { Request } from "express";
import { ApiError } from "@svc/contract";
import { networkOf } from "@svc/domain";
import { abandonIdempotencyClaim, claimIdempotencyKey, completeIdempotencyKey } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import type { Reply } from "./request";

export type IdempotencyDeps = Pick<Deps, "store" | "now">;

const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;
const TTL_MS = 24 * 3600 * 1000;
/** A request still "in progress" after this long is presumed dead and may be taken over. */
const LOCK_MS = 60 * 1000;
/** Headers worth replaying; everything else (X-Request-Id included) is this response's own. */
const REPLAYED_HEADERS = ["location", "retry-after"];

export function readIdempotencyKey(req: Request): string | undefined {
  const key = req.headers["idempotency-key"];
  if (key === undefined) return undefined;
  if (typeof key !== "string" || !KEY_PATTERN.test(key)) {
    throw new ApiError("invalid_request", { param: "Idempotency-Key", message: "Idempotency-Key must be 1 to 255 printable ASCII characters." });
  }
  return key;
}

/**
 * Whose keys these are: the API key, so one key's replay never reaches another key
 * or the other mode. Everyone shares the public sandbox key, so there the caller's
 * network (the one its rate limit counts) is part of the scope too.
 */
export function callerScope(req: Request, caller: Caller): string {
  return caller.isSandbox ? `${caller.keyId}@${networkOf(req.ip ?? "")}` : caller.keyId;
}

/**
 * Runs `handle` at most once per (API key, Idempotency-Key) within 24 hours.
 * Final answers (success or a non-retryable error) are stored and replayed with
 * `Idempotent-Replayed: true`; retryable errors are not stored, so the client's
 * retry with the same key runs again. A handler that creates a lookup or job binds
 * it to the claim (`req.idempotencyClaim`) in the transaction that reserves its
 * money; if the process dies or fails after that commit, the retry is answered by
 * `recover` with that resource, and nothing is created or charged twice.
 */
export async function withIdempotency(
  deps: IdempotencyDeps,
  req: Request,
  caller: Caller,
  key: string,
  hash: string,
  handle: () => Promise<Reply>,
  renderError: (err: ApiError) => Reply,
  recover?: (resourceId: string) => Promise<Reply>,
): Promise<Reply> {
  const scope = { accountId: caller.accountId, callerScope: callerScope(req, caller), key };
  const claimed = await claimIdempotencyKey(deps.store.pool, { ...scope, requestHash: hash, now: deps.now(), lockMs: LOCK_MS, ttlMs: TTL_MS });
  if (claimed.kind === "mismatch") throw new ApiError("idempotency_key_reused", { param: "Idempotency-Key" });
  if (claimed.kind === "in_progress" || (claimed.kind === "recover" && !recover)) {
    throw new ApiError("idempotency_request_in_progress", { param: "Idempotency-Key", retryAfterSeconds: 1 });
  }
  if (claimed.kind === "replay") {
    return { status: claimed.status, body: JSON.parse(claimed.body.toString("utf8")), headers: { ...claimed.headers, "Idempotent-Replayed": "true" } };
  }
  const { claim } = claimed;
  req.idempotencyClaim = claim;
  let reply: Reply;
  try {
    reply = claimed.kind === "recover" && recover ? await recover(claimed.resourceId) : await handle();
  } catch (err) {
    if (!(err instanceof ApiError) || err.retryable) {
      await abandonIdempotencyClaim(deps.store.pool, claim, deps.now()).catch((e) => req.log.error({ err: e }, "could not release idempotency key"));
      throw err;
    }
    reply = renderError(err);
  } finally {
    req.idempotencyClaim = undefined;
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(reply.headers ?? {})) if (REPLAYED_HEADERS.includes(k.toLowerCase())) headers[k.toLowerCase()] = v;
  await completeIdempotencyKey(deps.store.pool, claim, { status: reply.status, headers, body: Buffer.from(JSON.stringify(reply.body ?? null)) });
  return reply;
}
