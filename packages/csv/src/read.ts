import type { Transform } from "node:stream";
import { parse } from "csv-parse";
import { parse as parseSync } from "csv-parse/sync";

/**
 * How delimited text is read here, whatever reads it: a UTF-8 byte order mark
 * dropped, every field trimmed, blank lines skipped, fields quoted with `"` (a quote
 * inside doubled), records ended by the first line ending the text uses (CRLF, LF or
 * CR; after a CRLF, a lone LF is text inside a field).
 */
export type CsvReadOptions = {
  /** The field separator: `,`, `;` or a tab (see likeliestDelimiter). */
  delimiter: string;
  /** Whether a record may hold fewer or more fields than the first one (else it is malformed). */
  relaxColumnCount: boolean;
};

/**
 * Every record of a whole text, strictly: a stray or unclosed quote, or (without
 * relaxColumnCount) a record of another length, throws and nothing is returned.
 * For texts already in memory (an uploaded job's file, 4 MB at most).
 */
export function readCsvText(text: string, options: CsvReadOptions): string[][] {
  return parseSync(text, {
    delimiter: options.delimiter,
    relax_column_count: options.relaxColumnCount,
    skip_empty_lines: true,
    trim: true,
    bom: true,
  }) as string[][];
}

export type CsvStreamOptions = CsvReadOptions & {
  /** A record longer than this is malformed (an unclosed quote swallowing the rest of the file), not data. */
  maxRecordBytes: number;
  /** Called once for each malformed record, which is skipped. */
  onMalformed: () => void;
};

/**
 * A stream that takes the bytes of delimited text and gives its records (string
 * arrays), leniently: a quote inside an unquoted field is kept as text, and a
 * malformed record (an unclosed quote, too long, or of another length without
 * relaxColumnCount) is skipped and reported to onMalformed, once however many errors
 * the parser raised on its line. For files of any size (the admin importers).
 */
export function readCsvStream(options: CsvStreamOptions): Transform {
  let lastBadLine: unknown = null;
  return parse({
    bom: true,
    delimiter: options.delimiter,
    skip_empty_lines: true,
    trim: true,
    relax_quotes: true,
    relax_column_count: options.relaxColumnCount,
    max_record_size: options.maxRecordBytes,
    skip_records_with_error: true,
    on_skip: (err) => {
      const line = err?.lines;
      if (line === undefined || line !== lastBadLine) options.onMalformed();
      lastBadLine = line;
      return undefined;
    },
  });
}

/**
 * The code (`CSV_…`) of an error the CSV parser raised, or null for any other error (a
 * file that cannot be read, …). The strict reader also throws `INVALID_OPENING_QUOTE`
 * (a quote inside an unquoted field), which the lenient stream never raises.
 */
export function csvErrorCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("CSV_") ? code : null;
}

/**
 * The separator a line (a header, most often) uses: the candidate it holds most of,
 * the earlier candidate on a tie, `fallback` when it holds none of them.
 */
export function likeliestDelimiter<D extends string>(line: string, candidates: readonly D[], fallback: D): D {
  let best = fallback;
  let bestCount = 0;
  for (const candidate of candidates) {
    if (candidate === "") continue;
    let count = 0;
    for (let at = line.indexOf(candidate); at !== -1; at = line.indexOf(candidate, at + candidate.length)) count += 1;
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return best;
}
