/** Delays before each retry, after the previous attempt (spec: Delivery and retry). */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000] as const;

/** No retry is scheduled later than this after the event. */
export const DELIVERY_WINDOW_MS = 24 * 3600_000;

/** Held events older than this are not delivered when the endpoint is verified. */
export const HELD_EVENT_TTL_MS = 24 * 3600_000;

/**
 * A verification challenge is retried only within the hour: by then the next
 * hourly challenge (a new event) takes over.
 */
export const VERIFICATION_WINDOW_MS = 3600_000;

/** ±10 % of each delay, so endpoints that failed together are not retried in lockstep. */
export const JITTER = 0.1;

/**
 * When to retry after the `attemptsMade`-th attempt failed at `now`, or null when
 * the delivery has failed for good (schedule used up, or the retry would fall past
 * the event's delivery window).
 */
export function nextRetryAt(opts: { eventCreatedAt: Date; attemptsMade: number; now: Date; windowMs: number; random?: () => number }): Date | null {
  const delay = RETRY_DELAYS_MS[opts.attemptsMade - 1];
  if (delay === undefined) return null;
  const factor = 1 - JITTER + 2 * JITTER * (opts.random ?? Math.random)();
  const at = new Date(opts.now.getTime() + Math.round(delay * factor));
  return at.getTime() > opts.eventCreatedAt.getTime() + opts.windowMs ? null : at;
}

export function deliveryWindowMs(eventType: string): number {
  return eventType === "webhook.verification" ? VERIFICATION_WINDOW_MS : DELIVERY_WINDOW_MS;
}
