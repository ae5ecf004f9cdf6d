import { parseArgs } from "node:util";

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

export type Flags = Record<string, string | undefined>;

/** Parses `--name value` flags; every flag is a string option, unknown ones are refused. */
export function parseFlags(args: string[], allowed: readonly string[]): Flags {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: Object.fromEntries(allowed.map((name) => [name, { type: "string" as const }])),
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) throw new CliError(`unexpected argument: ${positionals[0]}`);
    return values as Flags;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError((err as Error).message.replace(/\. To specify.*$/s, ""));
  }
}

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (value === undefined || value.trim() === "") throw new CliError(`--${name} is required`);
  return value.trim();
}

export function list(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(",").map((s) => s.trim()).filter(Boolean);
}
