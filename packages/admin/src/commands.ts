import { CliError } from "./args";
import type { CliContext } from "./context";
import { accountCreate } from "./commands/account-create";
import { keyCreate } from "./commands/key-create";
import { keyRevoke } from "./commands/key-revoke";
import { accountSet } from "./commands/account-set";
import { balanceChange } from "./commands/balance";
import { carrierImport } from "./commands/carrier-import";
import { checkSwitch, priceSet } from "./commands/prices";
import { ledgerReconcile } from "./commands/reconcile";
import { spamImport } from "./commands/spam-import";
import { webhookAttempts, webhookRedeliver } from "./commands/webhooks";
import { doctor } from "./commands/doctor";
import { liveAccessApprove, liveAccessDecline, liveAccessList } from "./commands/live-access";
import type { CommandOutput } from "./output";

export { CliError };
type Command = (args: string[], ctx: CliContext) => Promise<Record<string, unknown> | CommandOutput>;

const COMMANDS: Record<string, Command> = {
  "account create": accountCreate,
  "key create": keyCreate,
  "key revoke": keyRevoke,
  "account set": accountSet,
  "balance topup": balanceChange("topup"),
  "balance adjust": balanceChange("adjustment"),
  "price set": priceSet,
  "check enable": checkSwitch(true),
  "check disable": checkSwitch(false),
  "ledger reconcile": ledgerReconcile,
  "spam import": spamImport,
  "carrier import": carrierImport,
  "webhook attempts": webhookAttempts,
  "webhook redeliver": webhookRedeliver,
  "live-access list": liveAccessList,
  "live-access approve": liveAccessApprove,
  "live-access decline": liveAccessDecline,
  doctor,
};

export const USAGE = `usage: npm run admin -- <command> [--flags]
  account create --name NAME --balance AMOUNT
  key create --account ID --mode test|live|agent [--scopes s1,s2] [--allow-ip CIDR,...] [--daily-spend-cap AMOUNT] [--expires-at ISO8601]
             (agent keys need --scopes and --daily-spend-cap)
  key revoke --id ID
  account set --account ID [--daily-identifiers-cap N|none] [--daily-spend-cap AMOUNT|none] [--low-balance-threshold AMOUNT|none]
                           [--retention-days N] [--realtime on|off] [--require-allowlist on|off]
  balance topup --account ID --amount AMOUNT --reason TEXT [--reference REF]
  balance adjust --account ID --amount [-]AMOUNT --reason TEXT [--reference REF]
  price set --check CODE --amount AMOUNT [--account ID]      (--amount default with --account removes an override)
  check enable|disable --account ID --check CODE
  ledger reconcile --account ID
  spam import --source ftc|fcc|regulator|community|unassigned --file PATH [--format csv|tsv] [--country US|CA|DE]
                           (--country: national numbers of regulator/community/unassigned files; see docs/spam-importers.md)
  carrier import --source nanpa-co|nanpa-thousands|bnetza|ofcom --file PATH [--file PATH…] [--encoding auto|utf-8|windows-1252]
                           (replaces all of that source's number blocks with the files'; see docs/carrier-importers.md)
  webhook attempts --event ID                                (every delivery of an event and each attempt)
  webhook redeliver --event ID                               (send the event again, same webhook-id)
  live-access list [--status pending|approved|declined|all] [--limit N] [--reveal]
                           (requests from /get-test-key, oldest first; e-mail addresses masked unless --reveal)
  live-access approve --id ID [--note TEXT] [--reveal]       (issues a live key on the request's account, shown once)
  live-access decline --id ID --reason TEXT [--reveal]
  doctor [--account ID] [--no-probe] [--format json|table]   (which checks answer live and what the others miss;
                           reads the check-workers' VENDOR_*, SMTP_*, DNS_* settings; exit 3 when one cannot answer)
Amounts are US dollars, e.g. 25 or 12.50.`;

export async function runCommand(argv: string[], ctx: CliContext): Promise<Record<string, unknown> | CommandOutput> {
  // A command is one word (`doctor`) or two (`key create`).
  const words = argv[0] !== undefined && COMMANDS[argv[0]] ? 1 : 2;
  const name = argv.slice(0, words).join(" ");
  const command = COMMANDS[name];
  if (!command) throw new CliError(`unknown command${name ? ` "${name}"` : ""}\n${USAGE}`);
  return command(argv.slice(words), ctx);
}
