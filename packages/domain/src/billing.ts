import { CHECKS, type CheckCode, type InputKind } from "./checks";
import type { CheckResult, IdentifierStatus } from "./results";

/** Unit price per check (micro-USD) fixed at reservation time. */
export type UnitPrices = Partial<Record<CheckCode, string>>;

/**
 * The maximum possible cost of a request, as the spec defines it: every identifier
 * times every check of its input type times that check's price. Invalid, duplicate,
 * cached and inconclusive rows are released at settlement.
 */
export function maxCostMicros(counts: Record<InputKind, number>, checks: readonly CheckCode[], prices: ReadonlyMap<CheckCode, bigint>): bigint {
  let total = 0n;
  for (const check of checks) total += BigInt(counts[CHECKS[check].input]) * (prices.get(check) ?? 0n);
  return total;
}

/** Only a fresh conclusive answer about a valid identifier is billed; everything else is free. */
export function isBillable(rowStatus: IdentifierStatus | null, result: Pick<CheckResult, "status" | "cached">): boolean {
  return rowStatus === "valid" && result.status === "ok" && !result.cached;
}

export function toUnitPrices(prices: ReadonlyMap<CheckCode, bigint>, checks: readonly CheckCode[]): UnitPrices {
  const out: UnitPrices = {};
  for (const c of checks) out[c] = (prices.get(c) ?? 0n).toString();
  return out;
}
