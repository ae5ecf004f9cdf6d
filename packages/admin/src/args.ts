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
  // `--amount -5` would read -5 as a flag; join negative numbers to their flag first.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const next = args[i + 1];
    if (args[i]?.startsWith("--") && !args[i]?.includes("=") && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${args[i]}=${next}`);
      i += 1;
    } else joined.push(args[i] as string);
  }
  try {
    const { values, positionals } = parseArgs({
      args: joined,
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
