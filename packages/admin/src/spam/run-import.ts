import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import { insertSpamReports, type Sql, type SpamReportRow } from "@svc/store";
import { matchHeader, wrongHeader } from "../delimited/header";
import { readRecords } from "../delimited/read-records";
import { latestDay } from "./dates";
import type { SpamCountry } from "./numbers";
import { columnKey, type SkipReason, type SourceSpec } from "./types";

export type ImportRun = {
  spec: SourceSpec;
  file: string;
  delimiter: "," | "\t";
  country: SpamCountry | null;
  importId: string;
  now: Date;
  sql: Sql;
  /** Called as the file is consumed (bytes read, data rows seen). */
  onProgress?: (bytes: number, rows: number) => void;
};

export type ImportOutcome = {
  fileSha256: string;
  rowsRead: number;
  rowsAdded: number;
  skipped: Partial<Record<SkipReason, number>>;
};

/** Maps the documented column names to their position in the header; refuses a header without them. */
function headerIndex(spec: SourceSpec, header: string[]): Map<string, number> {
  const { index, missing } = matchHeader(header, spec.columns, columnKey);
  if (missing.length > 0) {
    const expected = spec.columns.filter((c) => c.required).map((c) => c.name);
    throw wrongHeader(spec.name, missing, expected.join(","), "docs/spam-importers.md");
  }
  return index;
}

/**
 * Streams one CSV file into spam_reports: parsed record by record (see
 * readRecords), hashed as it is read, inserted in batches that skip stored
 * dedupe keys. Malformed records are counted and skipped; a wrong header stops
 * the run before anything is written.
 */
export async function runSpamImport(run: ImportRun): Promise<ImportOutcome> {
  const { spec } = run;
  const ctx = { latest: latestDay(run.now), country: run.country };
  const sha = createHash("sha256");
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sha.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });

  let rowsAdded = 0;
  const { rowsRead, skipped } = await readRecords({
    file: run.file,
    through: meter,
    delimiter: run.delimiter,
    relaxColumnCount: false,
    formatName: run.delimiter === "\t" ? "TSV" : "CSV",
    doc: "docs/spam-importers.md",
    header: (record) => headerIndex(spec, record),
    columnKey,
    read: (row) => spec.read(row, ctx),
    write: async (reports: SpamReportRow[]) => {
      rowsAdded += await insertSpamReports(run.sql, { importId: run.importId, signalClass: spec.signalClass, source: spec.source, reports });
    },
    onProgress: (rows) => run.onProgress?.(bytes, rows),
  });
  return { fileSha256: sha.digest("hex"), rowsRead, rowsAdded, skipped };
}
