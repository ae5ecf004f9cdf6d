/**
 * The spec's client rules for retrying: retry only what is marked `retryable`
 * (and, for requests that are safe to repeat, answers that never came), honour
 * `Retry-After`, otherwise exponential backoff with full jitter.
 */
export type RetryOptions = {
  /** Retries after the first attempt (so `maxRetries + 1` attempts at most). Default 2. */
  maxRetries: number;
  /** Backoff base: the n-th retry waits a uniformly random time in [0, min(maxDelayMs, initialDelayMs × 2^(n-1))). Default 500. */
  initialDelayMs: number;
  /** Backoff ceiling. Default 8,000. */
  maxDelayMs: number;
  /**
   * A `Retry-After` longer than this is not waited for: the error is thrown at once
   * with `retryAfterMs` set, so the caller decides (a `daily_cap_reached` counts down
   * to midnight UTC). Default 60,000.
   */
  maxRetryAfterMs: number;
  /** Source of jitter in [0, 1). Default Math.random. */
  random: () => number;
  /** How to wait between attempts. Default: a timer that stops early when the call is aborted. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
};

export const DEFAULT_RETRY: RetryOptions = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  random: Math.random,
  sleep: abortableSleep,
};

/** Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). `retry` counts from 1. */
export function backoffDelay(retry: number, policy: Pick<RetryOptions, "initialDelayMs" | "maxDelayMs" | "random">): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(policy.random() * ceiling);
}

/** `Retry-After` as delay-seconds or an HTTP date, in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
