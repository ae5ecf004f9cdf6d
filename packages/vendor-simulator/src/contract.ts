/**
 * The HTTP contract between the check-worker and an external vendor for the
 * `whatsapp`, `signal.registered` and `number.hlr` checks (docs/vendor-contract.md).
 *
 *   POST {base}/v1/lookups
 *   Authorization: Bearer <vendor key>
 *   {"service": "whatsapp" | "signal" | "hlr", "number": "+E164"}
 *
 *   200 {"result": "registered" | "not_registered" | "unknown", "business"?: boolean,
 *        "hlr"?: {"status": "reachable"|"unreachable"|"invalid"|"unknown", "ported": boolean,
 *                 "roaming": boolean, "network": string|null, "mcc_mnc": string|null, "country": string|null}}
 *   400 malformed request (not retried)   401 bad key (not retried)
 *   429 / 5xx / timeout: retryable
 *
 *   POST {base}/v1/lookups/batch        (up to 100 numbers, one service)
 *   {"service": "whatsapp", "numbers": ["+E164", ...]}
 *   200 {"results": [{"number": "+E164", ...VendorResponse}, ...]}   in request order
 */
export type VendorService = "whatsapp" | "signal" | "hlr";

export type VendorRequest = { service: VendorService; number: string };

export type VendorHlr = {
  status: "reachable" | "unreachable" | "invalid" | "unknown";
  ported: boolean;
  roaming: boolean;
  network: string | null;
  mcc_mnc: string | null;
  country: string | null;
};

export type VendorResponse = { result: "registered" | "not_registered" | "unknown"; business?: boolean; hlr?: VendorHlr };

export const MAX_BATCH = 100;

export type VendorBatchRequest = { service: VendorService; numbers: string[] };
export type VendorBatchResponse = { results: Array<VendorResponse & { number: string }> };
