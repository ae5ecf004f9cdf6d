import http from "node:http";
import https from "node:https";

/**
 * What a vendor route answered to the probe: `reachable` (it answered and did not
 * refuse the key), `key_refused` (401/403), `vendor_error` (429/5xx: down or
 * overloaded right now), `not_a_vendor` (another answer: a wrong URL or path),
 * `unreachable` (no connection) or `timeout`.
 */
export type VendorProbeOutcome = "reachable" | "key_refused" | "vendor_error" | "not_a_vendor" | "unreachable" | "timeout";
export type VendorProbe = { outcome: VendorProbeOutcome; status: number | null; ms: number };

/**
 * Asks a vendor route of docs/vendor-contract.md the cheapest question it has: a
 * batch of no numbers (`{"service": "whatsapp", "numbers": []}`). A vendor answers it
 * 400 (malformed: nothing is looked up, nothing is charged) once it has accepted the
 * key, 401 when it refuses the key. No number leaves the fleet; redirects are not
 * followed; the whole probe is bounded by `timeoutMs`.
 */
export function probeVendorRoute(baseUrl: string, apiKey: string, timeoutMs: number): Promise<VendorProbe> {
  const started = Date.now();
  const url = new URL("/v1/lookups/batch", baseUrl);
  const payload = Buffer.from(JSON.stringify({ service: "whatsapp", numbers: [] }));
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: VendorProbeOutcome, status: number | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ outcome, status, ms: Date.now() - started });
    };
    const req = client.request(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json", "content-length": String(payload.length), authorization: `Bearer ${apiKey}` } },
      (res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        if (status === 200 || status === 400 || status === 422) finish("reachable", status);
        else if (status === 401 || status === 403) finish("key_refused", status);
        else if (status === 429 || status >= 500) finish("vendor_error", status);
        else finish("not_a_vendor", status);
      },
    );
    const timer = setTimeout(() => finish("timeout", null), timeoutMs);
    req.on("error", () => finish("unreachable", null));
    req.end(payload);
  });
}
