/**
 * Amounts as the API writes them: US dollars as decimal strings with 2 to 6
 * fraction digits ("1.10", "0.0025"). Compared as integer micro-dollars, never as
 * floats, so "1.10" vs "1.1" vs 1.1 can never round the wrong way.
 */
const MICROS = 1_000_000n;
/** A non-negative decimal with at most 6 fraction digits (what `max_cost.amount` accepts). */
export const AMOUNT_PATTERN = /^(0|[1-9]\d{0,11})(?:\.(\d{1,6}))?$/;

/** Micro-dollars of an amount string or number, or null when it is not a plain amount. */
export function toMicros(value: string | number): bigint | null {
  const text = typeof value === "number" ? (Number.isFinite(value) && value >= 0 ? String(value) : "") : value.trim();
  const m = AMOUNT_PATTERN.exec(text);
  if (!m) return null;
  return BigInt(m[1] as string) * MICROS + BigInt((m[2] ?? "").padEnd(6, "0"));
}

/** The API's own notation: at least 2, at most 6 fraction digits. */
export function formatMicros(micros: bigint): string {
  const whole = micros / MICROS;
  let frac = (micros % MICROS).toString().padStart(6, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${whole}.${frac}`;
}
