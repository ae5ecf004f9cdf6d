import http from "node:http";
import https from "node:https";
import type { Answer, CheckCode } from "@svc/domain";
import { postJson } from "./http-json";
import { SourceError, type Identifier, type Source } from "./types";

type VendorService = "whatsapp" | "signal" | "hlr";
const SERVICE: Partial<Record<CheckCode, VendorService>> = { whatsapp: "whatsapp", "signal.registered": "signal", "number.hlr": "hlr" };

type VendorResponse = {
  number?: string;
  result?: string;
  business?: boolean;
  hlr?: { status?: string; ported?: boolean; roaming?: boolean; network?: string | null; mcc_mnc?: string | null; country?: string | null };
};

const INVALID: Answer = { status: "invalid", registered: null, attributes: null };

/**
 * A vendor behind the HTTP contract in docs/vendor-contract.md, asked in batches of
 * up to 100 numbers. Only E.164 numbers are sent. Connections are kept alive and
 * bounded by `maxSockets`.
 */
export class VendorHttpSource implements Source {
  readonly maxBatch = 100;
  private readonly agent: http.Agent;
  private readonly batchUrl: URL;

  constructor(
    readonly route: string,
    readonly check: CheckCode,
    baseUrl: string,
    private readonly apiKey: string,
    maxSockets = 64,
  ) {
    if (!SERVICE[check]) throw new Error(`the vendor contract has no service for ${check}`);
    this.batchUrl = new URL("/v1/lookups/batch", baseUrl);
    const Agent = this.batchUrl.protocol === "https:" ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    return (await this.lookupMany([id], signal))[0] ?? INVALID;
  }

  async lookupMany(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]> {
    const numbers = ids.map((id) => id.e164).filter((n): n is string => Boolean(n));
    const byNumber = new Map<string, VendorResponse>();
    if (numbers.length > 0) {
      const body = (await postJson(this.batchUrl, { service: SERVICE[this.check], numbers }, { authorization: `Bearer ${this.apiKey}` }, this.agent, signal)) as {
        results?: VendorResponse[];
      };
      if (!Array.isArray(body?.results) || body.results.length !== numbers.length) throw new SourceError("bad_response", true);
      body.results.forEach((r, i) => byNumber.set(numbers[i] as string, r));
    }
    return ids.map((id) => (id.e164 ? toAnswer(this.check, byNumber.get(id.e164) ?? {}) : INVALID));
  }
}

function toAnswer(check: CheckCode, body: VendorResponse): Answer {
  const registered = body.result === "registered" ? true : body.result === "not_registered" ? false : null;
  if (check === "number.hlr") {
    const h = body.hlr;
    if (!h || !["reachable", "unreachable", "invalid"].includes(String(h.status))) return { status: "unknown", registered: null, attributes: null };
    return {
      status: "ok",
      registered: h.status === "reachable" ? true : h.status === "unreachable" ? false : null,
      attributes: { status: h.status, ported: Boolean(h.ported), roaming: Boolean(h.roaming), network: h.network ?? null, mcc_mnc: h.mcc_mnc ?? null, country: h.country ?? null },
    };
  }
  if (registered === null) return { status: "unknown", registered: null, attributes: null };
  return { status: "ok", registered, attributes: check === "whatsapp" ? { business: Boolean(body.business) } : {} };
}
