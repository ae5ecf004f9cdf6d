import { parseAmount } from "./contract";
import type { ServiceList } from "./types";

/** Which of a check's two catalog prices a key pays. */
export type PriceMode = "live" | "test";

/** Test keys pay the test price (0); live and agent keys, and a key of unknown kind, the live price. `mode`: as `apiKeyMode` gives it. */
export const priceModeOf = (mode: string | null): PriceMode => (mode === "test" ? "test" : "live");

/** What a lookup's maximum cost depends on: how many identifiers of each kind, and the checks. */
export interface LookupQuoteRequest {
  numbers?: readonly unknown[];
  emails?: readonly unknown[];
  checks: readonly string[];
}

export interface CostQuote {
  /** The maximum possible cost, in micro-dollars (`formatAmount` writes it as the API does). */
  maxCostMicros: bigint;
  numbers: number;
  emails: number;
  /** Identifiers × checks of their input type (checks the catalog does not list count none). */
  checksTotal: number;
}

/**
 * The maximum possible cost of a lookup, computed as the API computes what it
 * reserves: for every check, every identifier of its input type (invalid and
 * repeated ones included; they are released after) × the check's price, from the
 * catalog as `client.services.list()` returns it with the key (the account's checks
 * and prices). A check the catalog does not list counts nothing: the API refuses it
 * (invalid_request or service_disabled), and `max_cost` bounds it regardless.
 *
 * No request of its own: a lookup-only key cannot call the job estimate, whose job
 * limits do not apply to lookups anyway. For a job, ask the API (`client.jobs.estimate`),
 * which also knows what the cache would answer.
 */
export function quoteLookup(catalog: ServiceList, priceMode: PriceMode, request: LookupQuoteRequest): CostQuote {
  const byName = new Map<string, ServiceList["data"][number]>();
  for (const s of catalog.data) for (const n of [s.code, ...s.aliases]) byName.set(n, s);
  const numbers = request.numbers?.length ?? 0;
  const emails = request.emails?.length ?? 0;
  let maxCostMicros = 0n;
  let checksTotal = 0;
  for (const name of request.checks) {
    const service = byName.get(name);
    if (!service) continue;
    const count = service.input === "email" ? emails : numbers;
    maxCostMicros += BigInt(count) * (parseAmount(service.prices[priceMode].amount) ?? 0n);
    checksTotal += count;
  }
  return { maxCostMicros, numbers, emails, checksTotal };
}
