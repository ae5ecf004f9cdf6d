import { Command, Option } from "commander";
import { LIMITS, type LookupCreateParams } from "@svc/sdk";
import { client, globals } from "../context";
import { EXIT } from "../exit-codes";
import { lookupText } from "../format";
import { amount, checkList, collect, identifiers, positiveInt } from "../input";
import { err, json, out } from "../output";

export function lookupCommand(): Command {
  return new Command("lookup")
    .summary(`check numbers and e-mail addresses now (up to ${LIMITS.lookupIdentifiers})`)
    .description(
      `Checks phone numbers (with country code) and e-mail addresses in real time, up to ${LIMITS.lookupIdentifiers} per call.\n` +
        "Give them as arguments, or one per line on stdin (when no argument is given, or with `-`).\n" +
        "Arguments with an @ are e-mail addresses. Without --checks: spam for numbers, email for addresses.",
    )
    .argument("[identifiers...]", "numbers and e-mail addresses; `-` reads stdin")
    .option("-c, --checks <codes>", "checks to run, comma-separated or repeated (see `svc services`)", collect)
    .addOption(new Option("--wait <seconds>", "seconds the API waits for every answer before answering `pending`").argParser(positiveInt("--wait", LIMITS.maxWaitSeconds, 0)).default(LIMITS.defaultLookupWaitSeconds))
    .option("--no-follow", "print a pending lookup as it is instead of waiting for it to complete")
    .option("--webhook <we_id>", "verified webhook endpoint to notify with lookup.completed")
    .option("--max-cost <amount>", "refuse (402 cost_limit_exceeded) if the maximum cost is higher, in USD")
    .option("--idempotency-key <key>", "resend-safe key (default: a new one per run, reused by the SDK's retries)")
    .addHelpText(
      "after",
      `
Examples:
  svc lookup +12025550101 deliverable@example.com
  svc lookup --checks spam,whatsapp +12025550101
  cut -d, -f1 numbers.csv | svc lookup --checks spam --json`,
    )
    .action(async (args: string[], opts: { checks?: string[]; wait: number; follow: boolean; webhook?: string; maxCost?: string; idempotencyKey?: string }, cmd: Command) => {
      const { numbers, emails } = await identifiers(args);
      const checks = checkList(opts.checks) ?? [...(numbers.length ? ["spam"] : []), ...(emails.length ? ["email"] : [])];
      const params: LookupCreateParams = { checks, wait: opts.wait };
      if (numbers.length) params.numbers = numbers;
      if (emails.length) params.emails = emails;
      if (opts.webhook) params.webhook_endpoint_id = opts.webhook;
      if (opts.maxCost !== undefined) params.max_cost = { amount: amount(opts.maxCost) };
      const c = client(cmd);
      let lookup = await c.lookups.create(params, opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : undefined);
      if (lookup.status === "pending" && opts.follow) {
        err(`${lookup.id} is pending; waiting for its answers (Ctrl-C stops waiting)…`);
        const onSigint = () => {
          err(`\nStopped waiting. The lookup goes on; read it later with GET ${lookup.next?.poll_url ?? `/v1/lookups/${lookup.id}`}`);
          process.exit(EXIT.interrupted);
        };
        process.once("SIGINT", onSigint);
        try {
          lookup = await c.lookups.waitForLookup(lookup.id);
        } finally {
          process.removeListener("SIGINT", onSigint);
        }
      }
      if (globals(cmd).json) json(lookup);
      else out(lookupText(lookup));
    });
}
