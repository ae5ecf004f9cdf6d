/**
 * Money is US dollars held as integer micro-dollars (1 USD = 1,000,000 µUSD) in a
 * `bigint`, never a float. In JSON an amount is a decimal string with 2 to 6
 * fraction digits, e.g. `"12.50"` or `"0.0025"`, alongside `"currency": "USD"`.
 */
export const CURRENCY = "USD";
export const MICROS_PER_UNIT = 1_000_000n;
/**
 * An amount as it is written to us (`max_cost.amount`, the admin's balances, prices
 * and caps): a non-negative decimal with at most 12 integer and 6 fraction digits.
 * The one definition: `parseAmount` reads with it, and the SDK (through the contract)
 * gives it to the CLI and the MCP server.
 */
export const AMOUNT_PATTERN = /^(0|[1-9]\d{0,11})(?:\.(\d{1,6}))?$/;

export type Money = { amount: string; currency: typeof CURRENCY };

export function formatAmount(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_UNIT;
  let frac = (abs % MICROS_PER_UNIT).toString().padStart(6, "0").replace(/0+$/, "");
  if (frac.length < 2) frac = frac.padEnd(2, "0");
  return `${negative ? "-" : ""}${whole}.${frac}`;
}

export function money(micros: bigint): Money {
  return { amount: formatAmount(micros), currency: CURRENCY };
}

/**
 * Parses a non-negative decimal amount given as a string (or a JSON number, read
 * through its shortest decimal form). Returns null when it is not a plain decimal
 * with at most 6 fraction digits and 12 integer digits.
 */
export function parseAmount(value: string | number): bigint | null {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value;
  const m = AMOUNT_PATTERN.exec(text);
  if (!m) return null;
  const whole = BigInt(m[1] as string);
  const frac = BigInt((m[2] ?? "").padEnd(6, "0"));
  return whole * MICROS_PER_UNIT + frac;
}
