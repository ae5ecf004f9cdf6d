/** `YYYY-MM-DD` of the UTC day containing `now`. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** The next 00:00 UTC, exactly: when daily counters reset. */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** Whole seconds until the next 00:00 UTC (at least 1). */
export function secondsUntilUtcMidnight(now: Date): number {
  return Math.max(1, Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000));
}
