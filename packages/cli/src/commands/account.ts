import { Command, Option } from "commander";
import { client, globals } from "../context";
import { accountText, limitsText, servicesText, usageChart, usageText } from "../format";
import { utcDay } from "../input";
import { json, out } from "../output";

export function accountCommand(): Command {
  return new Command("account")
    .summary("balance, reserved amount and today's usage")
    .description("Shows the account's balance, the amount reserved for running requests, what is available,\nand today's usage (UTC) in the key's mode.")
    .action(async (_opts: unknown, cmd: Command) => {
      const account = await client(cmd).account.get();
      if (globals(cmd).json) json(account);
      else out(accountText(account));
    });
}

export function limitsCommand(): Command {
  return new Command("limits")
    .summary("request rate, request sizes and daily caps")
    .description("Shows the request rate, the request sizes, the account's daily identifiers cap and the spend caps.\nDaily counters reset at 00:00 UTC.")
    .action(async (_opts: unknown, cmd: Command) => {
      const limits = await client(cmd).limits.get();
      if (globals(cmd).json) json(limits);
      else out(limitsText(limits));
    });
}

export function usageCommand(): Command {
  return new Command("usage")
    .summary("checks, conclusive answers and cost per day or per check")
    .description(
      "Usage of the key's mode (live or test) over UTC days, both inclusive (at most 366 days):\n" +
        "checks, conclusive answers, cached answers, billed units and cost. On a terminal, by day,\n" +
        "a bar chart of the daily cost follows the table.",
    )
    .requiredOption("--from <day>", "first UTC day: YYYY-MM-DD, today, yesterday or -Nd (N days ago)", utcDay("--from"))
    .requiredOption("--to <day>", "last UTC day, inclusive (same forms)", utcDay("--to"))
    .addOption(new Option("--group-by <what>", "one row per day or per check").choices(["day", "check"]).default("day"))
    .option("--no-chart", "no bar chart, even on a terminal")
    .addHelpText("after", "\nExamples:\n  svc usage --from -29d --to today\n  svc usage --from 2026-01-01 --to 2026-01-31 --group-by check --json")
    .action(async (opts: { from: string; to: string; groupBy: string; chart: boolean }, cmd: Command) => {
      const usage = await client(cmd).usage.get({ from: opts.from, to: opts.to, groupBy: opts.groupBy });
      if (globals(cmd).json) return json(usage);
      out(usageText(usage));
      // The chart is for people: only when stdout is a terminal, so pipes get the table alone.
      const chart = opts.chart && process.stdout.isTTY ? usageChart(usage) : null;
      if (chart) out(`\n${chart}`);
    });
}

export function servicesCommand(): Command {
  return new Command("services")
    .summary("the checks you can run, with prices")
    .description("Lists the checks: with SVC_API_KEY set, those your account may use at its prices; without it, the public catalog.")
    .action(async (_opts: unknown, cmd: Command) => {
      const services = await client(cmd).services.list();
      if (globals(cmd).json) json(services);
      else out(servicesText(services));
    });
}
