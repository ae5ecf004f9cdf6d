import { Transform, type TransformCallback } from "node:stream";
import type { Options } from "csv-stringify";
import { stringify as stringifySync } from "csv-stringify/sync";

/** A value a spreadsheet would run as a formula: it starts with = + - @, a tab or a CR. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** …unless it is a plain number (an E.164 number or a negative amount is data, not a formula). */
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/**
 * A cell's text for a spreadsheet: an object (a Date too) as JSON, anything else as
 * String() gives it, then with a leading apostrophe if a spreadsheet would run it as a
 * formula (OWASP "CSV injection"). Quoting is left to the stringifier.
 */
function spreadsheetText(value: string | number | bigint | boolean | object): string {
  const text = typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/**
 * The spreadsheet dialect (RFC 4180): comma separated, CRLF after every record, a
 * field quoted only when it holds `"`, `,`, CR or LF (a quote inside doubled), null
 * and undefined as empty fields. A fresh object per call: csv-stringify fills in the
 * `cast` object it is given.
 */
function spreadsheetOptions(): Options {
  return {
    delimiter: ",",
    quote: '"',
    escape: '"',
    record_delimiter: "\r\n",
    // A field holding a lone CR or LF is quoted too (the default only when record_delimiter is not given).
    quote_record_delimiter: true,
    eof: true,
    header: false,
    // Every type through spreadsheetText: csv-stringify's defaults write booleans as "1" and "" and dates
    // as epoch milliseconds, and its own guard (escape_formulas) would also defuse "-5" and "+12025550101" given as strings.
    cast: { string: spreadsheetText, number: spreadsheetText, bigint: spreadsheetText, boolean: spreadsheetText, date: spreadsheetText, object: spreadsheetText },
  };
}

/** One record as a line of spreadsheet CSV, CRLF included (a header, a short file). */
export function spreadsheetCsvRecord(cells: readonly unknown[]): string {
  return stringifySync([cells as unknown[]], spreadsheetOptions());
}

/** Records per chunk the writer gives: csv-stringify's set-up is paid once per chunk, the response is written in ~10 KB pieces. */
const RECORDS_PER_CHUNK = 64;

/**
 * A stream that takes items (in object mode), turns each into a record with `toCells`
 * and gives spreadsheet CSV text, one line per item, with the stream's backpressure:
 * for downloads of any size. The text leaves in chunks of up to 64 lines (the rest at
 * the end), so a line waits at most for the next 63 items. Writes no header of its own
 * (spreadsheetCsvRecord writes one). An error of `toCells` or of the stringifier
 * errors the stream.
 */
export function spreadsheetCsvWriter<T>(toCells: (item: T) => readonly unknown[]): Transform {
  let records: unknown[][] = [];
  const take = (): string => {
    const text = stringifySync(records, spreadsheetOptions());
    records = [];
    return text;
  };
  return new Transform({
    writableObjectMode: true,
    transform(item: T, _encoding, done: TransformCallback) {
      try {
        records.push(toCells(item) as unknown[]);
        if (records.length < RECORDS_PER_CHUNK) done();
        else done(null, take());
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        done(null, records.length > 0 ? take() : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
  });
}
