import { Command, Option } from "commander";
import { ALLOW_INSECURE_HTTP_ENV, API_KEY_ENV, BASE_URL_ENV } from "@svc/sdk";
import { accountCommand, limitsCommand, servicesCommand, usageCommand } from "./commands/account";
import { jobsCommand } from "./commands/jobs";
import { lookupCommand } from "./commands/lookup";
import { webhooksCommand } from "./commands/webhooks";
import { CLI_VERSION } from "./context";
import { positiveInt } from "./input";
import { stderrRaw, stdoutRaw } from "./output";

const EXIT_HELP = `
Output: tables for people on stdout; --json prints the API's own objects instead
(stable: fields are only added). Progress and messages go to stderr.

Environment:
  ${API_KEY_ENV}   the API key (never printed, never taken from an argument)
  ${BASE_URL_ENV}  the API's base URL (default http://localhost:8080); plain http only to loopback
  ${ALLOW_INSECURE_HTTP_ENV}  1 or true: allow plain http to other hosts (as --allow-insecure-http)

Exit codes:
  0    ok (verify: valid; --wait/watch: the job completed)
  1    the answer is no (verify: not valid; the job failed or was cancelled)
  2    usage error: bad command, option or input file, or no ${API_KEY_ENV}; nothing was sent
  3    API error: the API refused the request (its code, message and request id are printed)
  4    network error: no answer (connection refused or reset, DNS, TLS, time limit)
  5    the API's answer was not the documented shape
  70   internal error in svc
  130  interrupted (Ctrl-C); a job being waited for keeps running

Docs: docs/cli.md`;

/** Applied to every command, so each one has the same output routing, errors and help. */
function configure(cmd: Command, jsonErrors: boolean): Command {
  cmd
    // With --json, usage errors are reported once, as a JSON error object (cli.ts), not also as commander's text.
    .configureOutput({ writeOut: stdoutRaw, writeErr: stderrRaw, outputError: (text, write) => (jsonErrors ? undefined : write(text)) })
    .exitOverride()
    .showHelpAfterError(!jsonErrors && "(add --help for usage)")
    .helpOption("-h, --help", "show help for this command");
  // Descriptions are written with line breaks for reading in the source; commander
  // wraps them to the terminal, so only paragraph breaks are kept.
  cmd.description(cmd.description().replace(/(?<!\n)\n(?!\n)/g, " "));
  for (const sub of cmd.commands) configure(sub, jsonErrors);
  return cmd;
}

/** The whole `svc` command tree (commander: subcommands, typed options, generated help). */
export function buildProgram(jsonErrors = false): Command {
  const program = new Command("svc")
    .description("Command-line tool for the phone and e-mail validation API (v1).")
    .version(CLI_VERSION, "-V, --version", "print the version")
    .option("--json", "print the API's own objects as JSON (for scripts)")
    .option("--verbose", "print each HTTP request and answer on stderr (never the key)")
    .option("--base-url <url>", `API base URL (default: ${BASE_URL_ENV}, else http://localhost:8080); https, or http to loopback only`)
    .option("--allow-insecure-http", `allow a plain http base URL to a host that is not loopback (the key crosses the network unencrypted); also ${ALLOW_INSECURE_HTTP_ENV}=1`)
    .addOption(new Option("--timeout <seconds>", "time limit of one HTTP attempt").argParser((v) => positiveInt("--timeout", 3600)(v) * 1000))
    .addHelpText("after", EXIT_HELP)
    .addCommand(lookupCommand())
    .addCommand(jobsCommand())
    .addCommand(accountCommand())
    .addCommand(limitsCommand())
    .addCommand(usageCommand())
    .addCommand(servicesCommand())
    .addCommand(webhooksCommand());
  return configure(program, jsonErrors);
}
