import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parse } from "csv-parse";
import { insertSpamReports, type Sql, type SpamReportRow } from "@svc/store";
import { CliError } from "../args";
import { latestDay } from "./dates";
import type { SpamCountry } from "./numbers";
import { columnKey, type Row, type SkipReason, type SourceSpec } from "./types";

export const BATCH_SIZE = 1000;
/** A record longer than this is malformed (an unclosed quote swallowing the file), not a report. */
const MAX_RECORD_BYTES = 64 * 1024;

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
  const positions = new Map<string, number>();
  header.forEach((name, i) => {
    const key = columnKey(name);
    if (key !== "" && !positions.has(key)) positions.set(key, i);
  });
  const index = new Map<string, number>();
  const missing: string[] = [];
  for (const column of spec.columns) {
    const found = [column.name, ...(column.aliases ?? [])].map((n) => positions.get(columnKey(n))).find((i) => i !== undefined);
    if (found !== undefined) index.set(columnKey(column.name), found);
    else if (column.required) missing.push(column.name);
  }
  if (missing.length > 0) {
    // The first row is not echoed: a file without a header starts with a report, consumer fields and all.
    const expected = spec.columns.filter((c) => c.required).map((c) => c.name);
    throw new CliError(
      `wrong header for --source ${spec.name}: missing column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; ` +
        `expected a first row naming ${expected.join(",")} (other columns are ignored; see docs/spam-importers.md)`,
    );
  }
  return index;
}

/**
 * Streams one CSV file into spam_reports: parsed record by record (quotes,
 * CRLF and a UTF-8 BOM handled by csv-parse), hashed as it is read, inserted in
 * batches that skip stored dedupe keys. Malformed records are counted and
 * skipped; a wrong header stops the run before anything is written.
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

  let malformed = 0;
  let lastBadLine: unknown = null;
  const parser = parse({
    bom: true,
    delimiter: run.delimiter,
    skip_empty_lines: true,
    trim: true,
    relax_quotes: true,
    max_record_size: MAX_RECORD_BYTES,
    skip_records_with_error: true,
    // One malformed record can raise several errors on the same line: count it once.
    on_skip: (err) => {
      const line = err?.lines;
      if (line === undefined || line !== lastBadLine) malformed += 1;
      lastBadLine = line;
      return undefined;
    },
  });

  let index: Map<string, number> | null = null;
  let rowsRead = 0;
  let rowsAdded = 0;
  const skipped: Partial<Record<SkipReason, number>> = {};
  let batch: SpamReportRow[] = [];
  const flush = async () => {
    rowsAdded += await insertSpamReports(run.sql, { importId: run.importId, signalClass: spec.signalClass, source: spec.source, reports: batch });
    batch = [];
  };

  // The first error of the consuming side (a wrong header, a failed insert) is the one to report:
  // the pipeline itself may reject with the abort that tearing the streams down caused.
  let failure: unknown = null;
  const consume = async (records: AsyncIterable<string[]>) => {
    let record: string[] = [];
    const row: Row = {
      get: (column) => {
        const i = index?.get(columnKey(column));
        return i === undefined ? undefined : record[i];
      },
    };
    for await (record of records) {
      if (index === null) {
        index = headerIndex(spec, record);
        continue;
      }
      rowsRead += 1;
      const result = spec.read(row, ctx);
      if ("skip" in result) skipped[result.skip] = (skipped[result.skip] ?? 0) + 1;
      else batch.push(result);
      if (batch.length >= BATCH_SIZE) await flush();
      if (rowsRead % 500 === 0) run.onProgress?.(bytes, rowsRead + malformed);
    }
  };
  await pipeline(createReadStream(run.file), meter, parser, (records: AsyncIterable<string[]>) =>
    consume(records).catch((err: unknown) => {
      failure = err;
      throw err;
    }),
  ).catch((err: unknown) => {
    if (failure !== null) throw failure;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR" || code === "EACCES") throw new CliError(`cannot read --file "${run.file}": ${code}`);
    if (typeof code === "string" && code.startsWith("CSV_")) throw new CliError(`--file is not a readable ${run.delimiter === "\t" ? "TSV" : "CSV"} file (${code})`);
    throw err;
  });
  if (index === null) throw new CliError(`--file "${run.file}" is empty: expected a header row (see docs/spam-importers.md)`);
  await flush();
  if (malformed > 0) skipped.malformed_row = malformed;
  run.onProgress?.(bytes, rowsRead + malformed);
  return { fileSha256: sha.digest("hex"), rowsRead: rowsRead + malformed, rowsAdded, skipped };
}
