/**
 * What a command that says more than one JSON object can return: the JSON (printed
 * unless `text` is given, e.g. `--format table`) and the exit code to end with
 * (`doctor` exits 3 when a check cannot answer live). Its own module so commands
 * and cli.ts share it without importing each other.
 */
export class CommandOutput {
  constructor(
    readonly json: Record<string, unknown>,
    readonly text: string | null = null,
    readonly exitCode = 0,
  ) {}
}

/** Fixed-width columns, a header and a rule; cells are single-line text. */
export function renderTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join("  ").trimEnd();
  // The last column is not padded, so its rule is as long as its header.
  const rule = widths.map((w, i) => "-".repeat(i === widths.length - 1 ? (headers[i] ?? "").length : w));
  return [line(headers), line(rule), ...rows.map(line)].join("\n");
}
