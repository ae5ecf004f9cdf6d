import { createHash } from "node:crypto";
import type { SignalClass } from "@svc/domain";
import type { ColumnSpec, Row } from "../delimited/header";
import type { CategoryCode } from "./categories";
import { parseReportDay } from "./dates";
import type { NumberSkip, SpamCountry } from "./numbers";

// The source readers take their rows from here, beside the rest of their types.
export type { Row };

/** Why a data row was read but not stored (counted, never printed with its content). */
export type SkipReason = NumberSkip | "malformed_row" | "missing_date" | "invalid_date" | "not_unwanted_call" | "missing_regulator";

/** One report as stored: number, category code, day and its dedupe key; nothing else. */
export type Report = { e164: string; category: CategoryCode | null; reportedOn: string; dedupeKey: string };

export type RowResult = Report | { skip: SkipReason };

export type RowContext = {
  /** Latest report day accepted (tomorrow). */
  latest: string;
  /** `--country`: the country of national numbers when a row does not say. */
  country: SpamCountry | null;
};

export type SourceSpec = {
  /** `--source` value. */
  name: string;
  /** `spam_reports.source` / `spam_imports.source`. */
  source: "ftc_dnc" | "fcc_complaints" | "regulator_actions" | "community" | "unassigned_offers";
  signalClass: SignalClass;
  /** The columns read; every other column of the file is ignored. */
  columns: readonly ColumnSpec[];
  /** Whether `--country` applies (national numbers of ftc/fcc are always US/CA). */
  acceptsCountry: boolean;
  read(row: Row, ctx: RowContext): RowResult;
};

/** Header names compare case-insensitively, with spaces, dashes and underscores alike. */
export function columnKey(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

/**
 * `source:e164:day:hash`: the same report gives the same key on every run, so a
 * re-import adds nothing. The hash covers the fields that tell two reports of
 * one number on one day apart (per source, see docs/spam-importers.md); it is a
 * one-way digest and carries no readable text.
 */
export function dedupeKey(source: SourceSpec["source"], e164: string, day: string, parts: readonly string[]): string {
  const digest = createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);
  return `${source}:${e164}:${day}:${digest}`;
}

/** Whitespace squeezed, trimmed: raw values are compared (and hashed) this way. */
export function squeeze(value: string | undefined): string {
  return (value ?? "").replace(/\s+/g, " ").trim();
}

/** The report day from the first column that holds a valid date; why not otherwise. */
export function firstDay(values: Array<string | undefined>, latest: string): string | { skip: "missing_date" | "invalid_date" } {
  let seen = false;
  for (const value of values) {
    if (!value || value.trim() === "") continue;
    seen = true;
    const day = parseReportDay(value, latest);
    if (day) return day;
  }
  return { skip: seen ? "invalid_date" : "missing_date" };
}
