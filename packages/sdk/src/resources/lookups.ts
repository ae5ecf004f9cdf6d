import { LIMITS } from "../contract";
import { InvalidArgumentError, TimeoutError } from "../errors";
import { operation, type IdempotentRequestOptions, type RequestOptions, type Transport } from "../transport";
import type { Lookup, LookupCreateParams } from "../types";

export interface LookupGetParams {
  /** Seconds (0–30) the API holds the request while checks are pending. */
  wait?: number;
}

export interface WaitForLookupOptions extends RequestOptions {
  /** Seconds each poll is held by the API (its `wait`). Default 30. */
  pollWaitSeconds?: number;
  /** Give up with a `timeout` error after this many ms. Default: no limit. */
  maxWaitMs?: number;
}

/** True once every check of the lookup has answered. */
export const isLookupFinished = (lookup: Pick<Lookup, "status" | "completed_at">): boolean => lookup.status === "completed" || lookup.completed_at != null;

/** POST /v1/lookup and GET /v1/lookups/{id}. */
export class Lookups {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /**
   * Checks up to 100 numbers and e-mail addresses. Resolves with the lookup, `completed`
   * or, when some checks outlast `wait` (default 10 s), `pending` (see `waitForLookup`).
   * An Idempotency-Key is generated once and reused by every retry.
   */
  async create(params: LookupCreateParams, options?: IdempotentRequestOptions): Promise<Lookup> {
    if (!params || typeof params !== "object") throw new InvalidArgumentError("params", "Lookup parameters (numbers, emails, checks) are required.");
    const wait = typeof params.wait === "number" ? params.wait : LIMITS.defaultLookupWaitSeconds;
    return (await this.#t.call<Lookup>(operation("createLookup"), { json: params, waitSeconds: wait, options })).data;
  }

  /** Reads a lookup; with `wait`, the API holds the request until it completes or the time is up. */
  async get(id: string, params: LookupGetParams = {}, options?: RequestOptions): Promise<Lookup> {
    return (await this.#t.call<Lookup>(operation("getLookup"), { id, query: { wait: params.wait }, waitSeconds: params.wait, options })).data;
  }

  /** Long-polls a pending lookup (the API's `wait`, not tight polling) until it completes. */
  async waitForLookup(id: string, options: WaitForLookupOptions = {}): Promise<Lookup> {
    const { pollWaitSeconds = LIMITS.maxWaitSeconds, maxWaitMs, ...request } = options;
    const deadline = maxWaitMs === undefined ? Infinity : Date.now() + maxWaitMs;
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(0, Math.min(pollWaitSeconds, Math.ceil(left / 1000)));
      const started = Date.now();
      const lookup = await this.get(id, { wait }, request);
      if (isLookupFinished(lookup)) return lookup;
      if (Date.now() >= deadline) throw new TimeoutError(`The lookup did not complete within ${maxWaitMs} ms.`, { attempts: 0, retryable: true });
      await pace(started, request.signal);
    }
  }
}

/** At most one poll a second when the API answers early without news (never a tight loop). */
export async function pace(started: number, signal?: AbortSignal, minIntervalMs = 1000): Promise<void> {
  const rest = minIntervalMs - (Date.now() - started);
  if (rest <= 0) return;
  await new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, rest);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
