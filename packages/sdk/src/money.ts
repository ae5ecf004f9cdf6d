/**
 * Money on the client side, by the API's own rules (the contract's, bundled from the
 * definitions the gateway reads amounts with). Amounts travel as decimal strings in
 * USD; compute with them as integer micro-dollars (`bigint`), never as floats, so
 * "1.10" vs "1.1" vs 1.1 cannot round the wrong way.
 *
 * - `AMOUNT_PATTERN`: what `max_cost.amount` accepts: a non-negative decimal with at
 *   most 12 integer and 6 fraction digits.
 * - `parseAmount("1.20")` → `1_200_000n`; null when the text is not such an amount (a
 *   JSON number is read through its shortest decimal form).
 * - `formatAmount(1_200_000n)` → `"1.20"`: the API's notation, 2 to 6 fraction digits.
 */
export { AMOUNT_PATTERN, MICROS_PER_UNIT, formatAmount, parseAmount } from "./contract";
