import type { NumberType } from "libphonenumber-js/max";
import type { Answer, CheckCode } from "@svc/domain";

/** What a source is asked about: a normalised number or address, never the raw input. */
export type Identifier = { e164: string | null; email: string | null; domain: string | null; country: string | null; numberType: NumberType | undefined };

/**
 * One route to an answer for one check (a vendor, a local database, an SMTP probe).
 * Throws SourceError when it cannot answer; the runner retries, fails over and
 * trips the route's breaker.
 */
export interface Source {
  readonly route: string;
  readonly check: CheckCode;
  lookup(id: Identifier, signal: AbortSignal): Promise<Answer>;
  /**
   * Optional: answers many identifiers in one call (one answer per identifier, in
   * order). Sources behind a network hop should offer it: one request per batch is
   * far cheaper than one per identifier.
   */
  lookupMany?(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]>;
  /** Largest batch `lookupMany` accepts. */
  readonly maxBatch?: number;
}

export type RouteLimits = { timeoutMs: number; concurrency: number; retries: number };

export class SourceError extends Error {
  constructor(
    readonly kind: "unavailable" | "timeout" | "rejected" | "bad_response",
    readonly retryable: boolean,
    message?: string,
  ) {
    super(message ?? kind);
    this.name = "SourceError";
  }
}
