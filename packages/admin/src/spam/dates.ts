const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const US = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?\s?m\.?)?)?$/i;
const DE = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:,?\s+\d{1,2}:\d{2}(?::\d{2})?)?$/;

/** Oldest date accepted: anything earlier is a broken export, not a report. */
export const EARLIEST_DAY = "1990-01-01";

function day(year: number, month: number, dayOfMonth: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, dayOfMonth));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== dayOfMonth) return null;
  return date.toISOString().slice(0, 10);
}

/**
 * The calendar day of a report, `YYYY-MM-DD`, as written in the file: any time
 * of day and any zone are ignored. Accepts `2026-09-22`, `2026-09-22 18:22:00`,
 * `2026-09-22T18:22:00Z`, `09/22/2026` (US, with an optional time) and
 * `22.09.2026` (German). Null when it is not a real date, is before 1990, or is
 * after `latest` (tomorrow, so a report cannot come from the future).
 */
export function parseReportDay(text: string | undefined, latest: string): string | null {
  const value = (text ?? "").trim();
  let m = ISO.exec(value);
  let result: string | null = null;
  if (m) result = day(Number(m[1]), Number(m[2]), Number(m[3]));
  else if ((m = US.exec(value))) result = day(Number(m[3]), Number(m[1]), Number(m[2]));
  else if ((m = DE.exec(value))) result = day(Number(m[3]), Number(m[2]), Number(m[1]));
  if (result === null || result < EARLIEST_DAY || result > latest) return null;
  return result;
}

/** The day after `now` (UTC), the latest report day accepted. */
export function latestDay(now: Date): string {
  return new Date(now.getTime() + 24 * 3600 * 1000).toISOString().slice(0, 10);
}
