import { createReadStream } from "node:fs";
import type { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { csvErrorCode, readCsvStream } from "@svc/csv";
import { CliError } from "../args";
import type { Row } from "./header";

/** Rows written per call of `write`. */
export const BATCH_SIZE = 1000;
/** A record longer than this is malformed (an unclosed quote swallowing the file), not a data row. */
const MAX_RECORD_BYTES = 64 * 1024;
/** Data rows between two progress reports. */
const PROGRESS_EVERY = 500;

/** A file that cannot be opened becomes a CliError naming it; any other error passes through. */
export function fileError(file: string, err: unknown): never {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "EISDIR" || code === "EACCES") throw new CliError(`cannot read --file "${file}": ${code}`);
  throw err;
}

export type ReadRecords<Result extends object, Skip extends string> = {
  file: string;
  /** Sits between the file and the parser (hashing, decoding); passes bytes the parser can read. */
  through: Transform;
  delimiter: string;
  /** Whether a record may hold fewer or more fields than the header (else it is malformed). */
  relaxColumnCount: boolean;
  /** What the file is called in "--file is not a readable … file": `CSV`, `TSV`, `delimited text`. */
  formatName: string;
  /** The doc the "empty file" refusal points at. */
  doc: string;
  /** Column positions from the header row; throws (a CliError) on a header without the required columns. */
  header(record: string[]): Map<string, number>;
  /** How a column name is keyed in the header's map (the same function `header` used). */
  columnKey(name: string): string;
  /** One data row: what to write, or why it is skipped. */
  read(row: Row): Result | { skip: Skip };
  /** Writes one non-empty batch of at most BATCH_SIZE results. */
  write(batch: Result[]): Promise<void>;
  /** Called every PROGRESS_EVERY data rows and once at the end, with the rows seen (malformed ones included). */
  onProgress?: (rows: number) => void;
};

export type RecordsOutcome<Skip extends string> = {
  /** Data rows seen, malformed ones included. */
  rowsRead: number;
  skipped: Partial<Record<Skip | "malformed_row", number>>;
};

/**
 * Streams one delimited file through `through` and @svc/csv's lenient reader (quotes,
 * CRLF and a BOM handled there), maps the header, reads every data row and writes the
 * results in batches. Malformed records are counted as `malformed_row` and skipped; a
 * wrong header or an empty file stops the run before anything is written.
 */
export async function readRecords<Result extends object, Skip extends string>(opts: ReadRecords<Result, Skip>): Promise<RecordsOutcome<Skip>> {
  let malformed = 0;
  const parser = readCsvStream({
    delimiter: opts.delimiter,
    relaxColumnCount: opts.relaxColumnCount,
    maxRecordBytes: MAX_RECORD_BYTES,
    onMalformed: () => {
      malformed += 1;
    },
  });

  let index: Map<string, number> | null = null;
  let rowsRead = 0;
  const skipped: Partial<Record<Skip | "malformed_row", number>> = {};
  let batch: Result[] = [];
  const flush = async () => {
    if (batch.length > 0) await opts.write(batch);
    batch = [];
  };

  // The first error of the consuming side (a wrong header, a failed write) is the one to report:
  // the pipeline itself may reject with the abort that tearing the streams down caused.
  let failure: unknown = null;
  const consume = async (records: AsyncIterable<string[]>) => {
    let record: string[] = [];
    const row: Row = {
      get: (column) => {
        const i = index?.get(opts.columnKey(column));
        return i === undefined ? undefined : record[i];
      },
    };
    for await (record of records) {
      if (index === null) {
        index = opts.header(record);
        continue;
      }
      rowsRead += 1;
      const result = opts.read(row);
      if ("skip" in result) {
        const reason = (result as { skip: Skip }).skip;
        skipped[reason] = (skipped[reason] ?? 0) + 1;
      } else batch.push(result as Result);
      if (batch.length >= BATCH_SIZE) await flush();
      if (rowsRead % PROGRESS_EVERY === 0) opts.onProgress?.(rowsRead + malformed);
    }
  };
  await pipeline(createReadStream(opts.file), opts.through, parser, (records: AsyncIterable<string[]>) =>
    consume(records).catch((err: unknown) => {
      failure = err;
      throw err;
    }),
  ).catch((err: unknown) => {
    if (failure !== null) throw failure;
    const code = csvErrorCode(err);
    if (code !== null) throw new CliError(`--file is not a readable ${opts.formatName} file (${code})`);
    fileError(opts.file, err);
  });
  if (index === null) throw new CliError(`--file "${opts.file}" is empty: expected a header row (see ${opts.doc})`);
  await flush();
  if (malformed > 0) skipped.malformed_row = malformed;
  opts.onProgress?.(rowsRead + malformed);
  return { rowsRead: rowsRead + malformed, skipped };
}

/** Skip counts as the import commands print them: the total, and each reason in name order. */
export function skippedSummary<Skip extends string>(skipped: Partial<Record<Skip, number>>): { total: number; reasons: Partial<Record<Skip, number>> } {
  const reasons = Object.fromEntries(Object.entries(skipped).sort(([a], [b]) => a.localeCompare(b))) as Partial<Record<Skip, number>>;
  const total = Object.values<number | undefined>(reasons).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  return { total, reasons };
}
