import { statSync } from "node:fs";
import { AMOUNT_PATTERN } from "@svc/sdk";
import { UsageError } from "./exit-codes";

/** Everything on stdin, as bytes. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Identifiers from the arguments (one per argument) and, when stdin is not a
 * terminal and no argument was given (or `-` was), from stdin: one per line,
 * blank lines and `#` comments skipped. E-mail addresses are those with an `@`.
 */
export async function identifiers(args: string[]): Promise<{ numbers: string[]; emails: string[] }> {
  const list: string[] = [];
  const wantsStdin = args.includes("-") || (args.length === 0 && !process.stdin.isTTY);
  for (const a of args) if (a !== "-") list.push(a.trim());
  if (wantsStdin) {
    for (const line of (await readStdin()).toString("utf8").split(/\r?\n/)) {
      const t = line.trim();
      if (t && !t.startsWith("#")) list.push(t);
    }
  }
  const ids = list.filter((s) => s !== "");
  if (ids.length === 0) throw new UsageError("No numbers or e-mail addresses: give them as arguments, or one per line on stdin.");
  return { numbers: ids.filter((s) => !s.includes("@")), emails: ids.filter((s) => s.includes("@")) };
}

/** `spam,email` or `--checks spam --checks email` → ["spam", "email"]. */
export function checkList(values: string[] | undefined): string[] | undefined {
  if (!values || values.length === 0) return undefined;
  const list = values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new UsageError("--checks needs at least one check code (see `svc services`).");
  return list;
}

/** commander collector for repeatable options. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** `--max-cost 5` / `5.00` / `USD 5.00` → "5.00"-style amount string (never a float), as the API accepts it (the SDK's AMOUNT_PATTERN). */
export function amount(value: string, option = "--max-cost"): string {
  const v = value.trim().replace(/^\$|^USD\s*/i, "").replace(/\s*USD$/i, "");
  if (!AMOUNT_PATTERN.test(v)) throw new UsageError(`${option} must be an amount in USD such as 5 or 12.50 (got ${JSON.stringify(value)}).`);
  return v;
}

export function positiveInt(option: string, max = Number.MAX_SAFE_INTEGER, min = 1): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${option} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)}).`);
    return n;
  };
}

/**
 * A list file for a job: a path (checked now, so a typo is a usage error; the SDK
 * streams it from disk) or `-` for stdin.
 */
export function listFile(file: string): { file: string | NodeJS.ReadableStream; filename: string | undefined } {
  if (file === "-") {
    if (process.stdin.isTTY) throw new UsageError("`-` reads the list from stdin, but stdin is a terminal: pipe a file in.");
    return { file: process.stdin, filename: "stdin.csv" };
  }
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw new UsageError(`${file} is not a file.`);
    size = st.size;
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError(`Cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"}).`);
  }
  if (size === 0) throw new UsageError(`${file} is empty.`);
  return { file, filename: undefined };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD`, `today` or `yesterday` (UTC) → YYYY-MM-DD. */
export function utcDay(option: string): (value: string) => string {
  return (value: string) => {
    const v = value.trim().toLowerCase();
    const now = Date.now();
    if (v === "today") return new Date(now).toISOString().slice(0, 10);
    if (v === "yesterday") return new Date(now - 86_400_000).toISOString().slice(0, 10);
    const rel = /^-(\d{1,3})d$/.exec(v);
    if (rel) return new Date(now - Number(rel[1]) * 86_400_000).toISOString().slice(0, 10);
    if (!DAY.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`))) throw new UsageError(`${option} must be a UTC day: YYYY-MM-DD, today, yesterday or -Nd (got ${JSON.stringify(value)}).`);
    return v;
  };
}
