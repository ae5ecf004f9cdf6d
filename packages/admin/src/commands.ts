import type { Store } from "@svc/store";
import { CliError } from "./args";
import { accountCreate } from "./commands/account-create";
import { keyCreate } from "./commands/key-create";
import { keyRevoke } from "./commands/key-revoke";

export { CliError };

export type CliContext = { store: Store; secret: string; now: () => Date };
type Command = (args: string[], ctx: CliContext) => Promise<Record<string, unknown>>;

const COMMANDS: Record<string, Command> = {
  "account create": accountCreate,
  "key create": keyCreate,
  "key revoke": keyRevoke,
};

export const USAGE = `usage: npm run admin -- <command> [--flags]
  account create --name NAME --balance AMOUNT
  key create --account ID --mode test|live|agent [--scopes s1,s2] [--allow-ip CIDR,...] [--daily-spend-cap AMOUNT] [--expires-at ISO8601]
  key revoke --id ID
Amounts are US dollars, e.g. 25 or 12.50.`;

export async function runCommand(argv: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const name = argv.slice(0, 2).join(" ");
  const command = COMMANDS[name];
  if (!command) throw new CliError(`unknown command${name ? ` "${name}"` : ""}\n${USAGE}`);
  return command(argv.slice(2), ctx);
}
