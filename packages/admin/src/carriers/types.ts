import type { CarrierBlockRow, CarrierBlockSource } from "@svc/store";
import type { ColumnSpec, Row } from "../delimited/header";

// The source readers take their rows from here, beside the rest of their types.
export type { Row };

/** Why a data row was read but not stored (counted, never printed with its content). */
export type CarrierSkipReason =
  | "malformed_row"
  | "missing_block"
  | "invalid_block"
  | "missing_carrier"
  | "not_assigned";

export type CarrierRowResult = CarrierBlockRow | { skip: CarrierSkipReason };

export type CarrierSourceSpec = {
  /** `--source` value. */
  name: "nanpa-co" | "nanpa-thousands" | "bnetza" | "ofcom";
  /** `carrier_blocks.source`. */
  source: CarrierBlockSource;
  /** The columns read; every other column of the file is ignored. */
  columns: readonly ColumnSpec[];
  /** Some layouts name a column one of two ways (NPA-NXX, or NPA and NXX): at least one group must be present. */
  alternatives?: readonly (readonly string[])[];
  read(row: Row): CarrierRowResult;
};

/** Header names compare case-insensitively, accents dropped, with spaces, dashes, slashes and underscores alike. */
export function columnKey(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/ß/g, "ss")
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/** Whitespace squeezed, trimmed. */
export function squeeze(value: string | undefined): string {
  return (value ?? "").replace(/\s+/g, " ").trim();
}

/** Oldest effective date kept; anything earlier (e.g. NANPA's 00/00/0000 placeholders) is no date. */
const EARLIEST = "1900-01-01";

function isoDay(year: number, month: number, day: number): string | null {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  const iso = date.toISOString().slice(0, 10);
  return iso < EARLIEST ? null : iso;
}

/**
 * An allocation's effective day, `YYYY-MM-DD`, or null when blank or not a date
 * (the block is still stored: the carrier is what matters). `order` is how the
 * source writes `nn/nn/yyyy`: NANPA month first, Ofcom (UK) day first; `dd.mm.yyyy`
 * (Bundesnetzagentur) and ISO dates are read as such. A time of day is ignored.
 */
export function parseEffectiveDay(text: string | undefined, order: "mdy" | "dmy"): string | null {
  const value = squeeze(text);
  let m = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$/.exec(value);
  if (m) return isoDay(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:[, ].*)?$/.exec(value);
  if (m) return isoDay(Number(m[3]), Number(m[2]), Number(m[1]));
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: .*)?$/.exec(value);
  if (m) return order === "mdy" ? isoDay(Number(m[3]), Number(m[1]), Number(m[2])) : isoDay(Number(m[3]), Number(m[2]), Number(m[1]));
  return null;
}

/** A carrier name as stored: whitespace squeezed, at most 200 characters; null when blank. */
export function carrierName(value: string | undefined): string | null {
  const name = squeeze(value);
  return name === "" ? null : name.slice(0, 200);
}
