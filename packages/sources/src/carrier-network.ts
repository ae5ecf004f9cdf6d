import type { Answer } from "@svc/domain";
import type { OfflineCarrierSource } from "./carrier-offline";
import type { Identifier, Source } from "./types";

/**
 * `carrier` with porting data: a vendor route's `hlr` service (docs/vendor-contract.md)
 * names the network serving each number now; where it does, that network is the
 * answer (`carrier_source: "network"`), with line type and country from the
 * allocation data. Where the vendor names no network, the allocation answer
 * stands. When the vendor fails the call throws and the runner moves on to the next
 * route, the offline allocation source: the vendor wins whenever it answers, the
 * allocation data is the fallback.
 */
export class NetworkCarrierSource implements Source {
  readonly check = "carrier" as const;
  readonly maxBatch = 100;

  constructor(
    readonly route: string,
    private readonly hlr: Pick<Source, "lookupMany">,
    private readonly allocation: OfflineCarrierSource,
  ) {}

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    return (await this.lookupMany([id], signal))[0] as Answer;
  }

  async lookupMany(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]> {
    const lookupHlr = this.hlr.lookupMany;
    if (!lookupHlr) throw new Error("the hlr route answers in batches");
    const [allocated, network] = await Promise.all([this.allocation.lookupMany(ids, signal), lookupHlr.call(this.hlr, ids, signal)]);
    return allocated.map((answer, i) => withNetwork(answer, network[i]));
  }
}

function withNetwork(allocated: Answer, hlr: Answer | undefined): Answer {
  if (allocated.status === "invalid") return allocated;
  const name = hlr?.status === "ok" && typeof hlr.attributes?.network === "string" ? hlr.attributes.network.trim() : "";
  if (name === "") return allocated;
  const attrs = allocated.attributes ?? {};
  const country = typeof attrs.country === "string" ? attrs.country : typeof hlr?.attributes?.country === "string" ? hlr.attributes.country : null;
  return {
    status: "ok",
    registered: null,
    attributes: { line_type: typeof attrs.line_type === "string" ? attrs.line_type : "unknown", carrier: name.slice(0, 200), country, carrier_source: "network" },
  };
}
