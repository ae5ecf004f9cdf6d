import { createHash } from "node:crypto";
import { APIError, type ApiResponse, type Client, type Job } from "@svc/sdk";

/**
 * The Idempotency-Key of a create_job call the agent sent without one: derived
 * from the exact request body, so an agent that repeats the same call (after a
 * timeout, a restart, a lost answer) gets the first job back, replayed, instead of
 * a second job and a second charge. The API scopes keys to the API key and keeps
 * them 24 hours; an agent that wants the same list run again passes its own key.
 */
export function derivedIdempotencyKey(body: unknown, salt = ""): string {
  return `mcp-job-${createHash("sha256").update(JSON.stringify(body)).update(`\u0000${salt}`).digest("hex").slice(0, 48)}`;
}

/**
 * The Idempotency-Key of a confirmed lookup the agent sent without one: derived from
 * its confirmation token (the nonce), so the repeat a released token allows (after a
 * lost connection, a timeout, a retryable error; see `sendSettling`) is the same
 * request to the API, answered with the first lookup if that one was done. Tied to
 * the token, not to the list: a lookup run again later with a new confirmation is a
 * new lookup, as every lookup is.
 */
export function confirmedLookupKey(nonce: string): string {
  return `mcp-lookup-${createHash("sha256").update(`lookup\u0000${nonce}`).digest("hex").slice(0, 48)}`;
}

/** Hops along refusals stored by earlier identical calls before giving up (each hop is one replayed answer). */
const MAX_REPLAYED_REFUSALS = 10;

/**
 * POST /v1/jobs under `key`, else under a key derived from the body. The API also
 * stores refusals (a spend cap reached yesterday, a balance since topped up) and
 * replays them to the same key for 24 hours; a stored refusal means nothing was
 * created, so the call is asked again under a key derived from that refusal's
 * request id: still deterministic, so a repeat of this call replays what it gets.
 */
export async function createJobOnce(client: Client, body: Record<string, unknown>, key: string | undefined, signal: AbortSignal | undefined): Promise<ApiResponse<Job>> {
  if (key !== undefined) return client.request<Job>("createJob", { body, options: { idempotencyKey: key, signal } });
  let derived = derivedIdempotencyKey(body);
  for (let hop = 0; ; hop += 1) {
    try {
      return await client.request<Job>("createJob", { body, options: { idempotencyKey: derived, signal } });
    } catch (err) {
      const replayedRefusal = err instanceof APIError && err.headers.get("idempotent-replayed") === "true" && typeof err.body?.request_id === "string";
      if (!replayedRefusal || hop >= MAX_REPLAYED_REFUSALS) throw err;
      derived = derivedIdempotencyKey(body, err.body?.request_id as string);
    }
  }
}
