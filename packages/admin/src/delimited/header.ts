import { CliError } from "../args";

/** A data row, read by the column names of the documented layout. */
export type Row = { get(column: string): string | undefined };

export type ColumnSpec = { name: string; required: boolean; aliases?: readonly string[] };

/**
 * Where each documented column stands in a header row, keyed by `columnKey(name)`:
 * the first header cell matching the name or one of its aliases wins. `missing`
 * lists the required columns found under no name; the caller words the refusal,
 * since each importer points at its own doc.
 */
export function matchHeader(
  header: readonly string[],
  columns: readonly ColumnSpec[],
  columnKey: (name: string) => string,
): { index: Map<string, number>; missing: string[] } {
  const positions = new Map<string, number>();
  header.forEach((name, i) => {
    const key = columnKey(name);
    if (key !== "" && !positions.has(key)) positions.set(key, i);
  });
  const index = new Map<string, number>();
  const missing: string[] = [];
  for (const column of columns) {
    const found = [column.name, ...(column.aliases ?? [])].map((n) => positions.get(columnKey(n))).find((i) => i !== undefined);
    if (found !== undefined) index.set(columnKey(column.name), found);
    else if (column.required) missing.push(column.name);
  }
  return { index, missing };
}

/**
 * The refusal of a header that lacks required columns. The first row is not echoed:
 * a file without a header starts with data (for spam reports, consumer fields and all).
 * `expected` is the required names as the importer lists them; `doc` is its doc.
 */
export function wrongHeader(source: string, missing: readonly string[], expected: string, doc: string): CliError {
  return new CliError(
    `wrong header for --source ${source}: missing column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; ` +
      `expected a first row naming ${expected} (other columns are ignored; see ${doc})`,
  );
}
