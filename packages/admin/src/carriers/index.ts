import { bnetza } from "./bnetza";
import { nanpaCo, nanpaThousands } from "./nanpa";
import { ofcom } from "./ofcom";
import type { CarrierSourceSpec } from "./types";

/** `--source` values, in the order the usage lists them. */
export const CARRIER_SOURCES: Readonly<Record<string, CarrierSourceSpec>> = {
  "nanpa-co": nanpaCo,
  "nanpa-thousands": nanpaThousands,
  bnetza,
  ofcom,
};

export { runCarrierImport, type CarrierEncoding, type CarrierImportOutcome } from "./run-import";
export type { CarrierSkipReason, CarrierSourceSpec } from "./types";
