import type { Answer, CheckCode } from "@svc/domain";
import { SourceError, type Identifier, type Source } from "./types";

type VendorService = "whatsapp" | "signal" | "hlr";
const SERVICE: Partial<Record<CheckCode, VendorService>> = { whatsapp: "whatsapp", "signal.registered": "signal", "number.hlr": "hlr" };

type VendorResponse = {
  result?: string;
  business?: boolean;
  hlr?: { status?: string; ported?: boolean; roaming?: boolean; network?: string | null; mcc_mnc?: string | null; country?: string | null };
};

/**
 * A vendor behind the HTTP contract in docs/vendor-contract.md. Only the E.164
 * number is sent. 429, 5xx, timeouts and connection errors are retryable; other
 * 4xx are not (and mark the route failed).
 */
export class VendorHttpSource implements Source {
  constructor(
    readonly route: string,
    readonly check: CheckCode,
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {
    if (!SERVICE[check]) throw new Error(`the vendor contract has no service for ${check}`);
  }

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    if (!id.e164) return { status: "invalid", registered: null, attributes: null };
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/v1/lookups`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.apiKey}` },
        body: JSON.stringify({ service: SERVICE[this.check], number: id.e164 }),
        signal,
        redirect: "error",
      });
    } catch (err) {
      throw new SourceError(signal.aborted ? "timeout" : "unavailable", true, (err as Error).name);
    }
    if (res.status === 429 || res.status >= 500) {
      await res.body?.cancel().catch(() => undefined);
      throw new SourceError("unavailable", true, `vendor status ${res.status}`);
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new SourceError("rejected", false, `vendor status ${res.status}`);
    }
    let body: VendorResponse;
    try {
      body = (await res.json()) as VendorResponse;
    } catch {
      throw new SourceError("bad_response", true);
    }
    return toAnswer(this.check, body);
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
