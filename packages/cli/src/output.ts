/**
 * Everything svc prints goes through here: results on stdout, progress and
 * diagnostics on stderr, both passed through `redact` so the API key (and a webhook
 * signing secret given to `webhooks verify`) can never reach the terminal or a log,
 * whatever printed it: a command, commander's own messages, an error, a stack.
 */

import { redactSecrets } from "@svc/sdk";

const secrets = new Set<string>();

/** Something that must never be printed (the API key, a signing secret). */
export function addSecret(value: string | undefined): void {
  const v = value?.trim();
  if (v && v.length >= 8) secrets.add(v);
}

/**
 * The SDK's scrubber (one rule for the SDK, the CLI and the MCP server): each secret
 * registered here, and anything shaped like an API key (typed as an argument, say),
 * which keeps its prefix: `svc_live_[redacted]`.
 */
export function redact(text: string): string {
  return redactSecrets(text, secrets);
}

let stdoutClosed = false;
// `svc jobs results … | head`: a closed pipe ends the output quietly, as other tools do.
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code === "EPIPE") {
    stdoutClosed = true;
    process.exit(0);
  }
  throw err;
});

/** A result, to stdout. */
export function out(text: string): void {
  if (!stdoutClosed) process.stdout.write(redact(text.endsWith("\n") ? text : `${text}\n`));
}

/** Progress and diagnostics, to stderr. */
export function err(text: string): void {
  process.stderr.write(redact(text.endsWith("\n") ? text : `${text}\n`));
}

/** Raw text (commander's help and messages, progress bar frames), redacted, as given. */
export const stdoutRaw = (text: string): boolean => (stdoutClosed ? true : process.stdout.write(redact(text)));
export const stderrRaw = (text: string): boolean => process.stderr.write(redact(text));

/** An API object (or a list of them) as JSON on stdout: the `--json` output. */
export function json(value: unknown): void {
  out(JSON.stringify(value, null, 2));
}

/** One JSON value per line (NDJSON): streams of result items. */
export function jsonLine(value: unknown): void {
  out(JSON.stringify(value));
}

/** Waits until stdout has taken what was written (large outputs before exit). */
export function flushStdout(): Promise<void> {
  return new Promise((resolve) => {
    if (stdoutClosed || process.stdout.writableLength === 0) return resolve();
    process.stdout.once("drain", () => resolve());
  });
}

const width = (s: string) => [...s].length;

export type Align = "left" | "right";

/**
 * A table for people: a header row, columns two spaces apart, no borders (it
 * survives copy-paste, grep and narrow terminals). Right-aligned columns for figures.
 */
export function table(headers: string[], rows: string[][], align: Align[] = [], minWidths: number[] = []): string {
  const widths = headers.map((h, i) => Math.max(width(h), minWidths[i] ?? 0, ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => {
        const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - width(c)));
        return align[i] === "right" ? pad + c : i === cells.length - 1 ? c : c + pad;
      })
      .join("  ")
      .trimEnd();
  // The last column is not padded, so its rule is as long as its header.
  const rule = widths.map((w, i) => "-".repeat(i === widths.length - 1 ? width(headers[i] ?? "") : w));
  return [line(headers), line(rule), ...rows.map(line)].join("\n");
}

/** `label  value` pairs, labels aligned: one object for people. */
export function fields(pairs: [string, string | null | undefined][]): string {
  const shown = pairs.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== null && p[1] !== "");
  const w = Math.max(...shown.map(([k]) => width(k)));
  return shown.map(([k, v]) => `${k}${" ".repeat(w - width(k))}  ${v}`).join("\n");
}

/**
 * A table printed as rows arrive (result pages): the header and column widths come
 * from the first batch; later batches keep those widths where they fit.
 */
export class StreamingTable {
  #widths: number[] | null = null;
  readonly #headers: string[];
  readonly #align: Align[];
  readonly #minWidths: number[];
  constructor(headers: string[], align: Align[] = [], minWidths: number[] = []) {
    this.#headers = headers;
    this.#align = align;
    this.#minWidths = minWidths;
  }

  add(rows: string[][]): void {
    if (rows.length === 0) return;
    if (!this.#widths) {
      const text = table(this.#headers, rows, this.#align, this.#minWidths);
      this.#widths = this.#headers.map((h, i) => Math.max(width(h), this.#minWidths[i] ?? 0, ...rows.map((r) => width(r[i] ?? ""))));
      out(text);
      return;
    }
    const widths = this.#widths;
    out(
      rows
        .map((cells) =>
          cells
            .map((c, i) => {
              const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - width(c)));
              return this.#align[i] === "right" ? pad + c : i === cells.length - 1 ? c : c + pad;
            })
            .join("  ")
            .trimEnd(),
        )
        .join("\n"),
    );
  }

  get empty(): boolean {
    return this.#widths === null;
  }
}
