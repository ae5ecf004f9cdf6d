import { Command, Option } from "commander";
import { isJobFinished, LIMITS, schemas, type CsvJobParams, type DownloadFormat, type ResultsFilters } from "@svc/sdk";
import { client, globals } from "../context";
import { UsageError } from "../exit-codes";
import { estimateText, jobText, money, ROW_HEADERS, rowLines } from "../format";
import { amount, checkList, collect, listFile, positiveInt } from "../input";
import { err, flushStdout, json, jsonLine, out, StreamingTable } from "../output";
import { jobExitCode, waitWithProgress } from "../progress";

const FILE_HELP =
  "The list is a CSV file (with a header naming a phone or email column, or without one:\n" +
  "every cell an identifier) or a text file with one number or e-mail address per line;\n" +
  "`-` reads it from stdin. It is uploaded as is and read by the API (docs/csv-upload.md).";

/** The most rows GET /v1/jobs/{id}/results gives per page (the contract's `limit` maximum). */
const PAGE_SIZE_MAX = schemas.ResultsQuery.properties.limit.maximum as number;

type ListOptions = { checks: string[]; maxCost?: string; webhook?: string };

function jobParams(file: string, opts: ListOptions): CsvJobParams {
  const checks = checkList(opts.checks);
  if (!checks) throw new UsageError("--checks is required for jobs (e.g. --checks spam or --checks spam,email).");
  const { file: input, filename } = listFile(file);
  const params: CsvJobParams = { file: input as CsvJobParams["file"], checks };
  if (filename) params.filename = filename;
  if (opts.maxCost !== undefined) params.max_cost = { amount: amount(opts.maxCost) };
  if (opts.webhook) params.webhook_endpoint_id = opts.webhook;
  return params;
}

const checksOption = () => new Option("-c, --checks <codes>", "checks to run on every row, comma-separated or repeated (required)").argParser(collect).makeOptionMandatory();

export function jobsCommand(): Command {
  const jobs = new Command("jobs").summary(`bulk jobs of up to ${LIMITS.jobIdentifiers.toLocaleString("en-US")} numbers and e-mail addresses`).description("Bulk jobs: estimate, create, follow, read results, download, cancel.");

  jobs
    .command("estimate")
    .summary("count a list and give its maximum cost (free)")
    .description(`Counts valid, invalid and duplicate rows and cached answers, and gives the maximum possible cost.\nFree: nothing is stored, checked or charged.\n\n${FILE_HELP}`)
    .argument("<file>", "CSV or text file, or - for stdin")
    .addOption(checksOption())
    .addHelpText("after", "\nExample:\n  svc jobs estimate numbers.csv --checks spam,whatsapp")
    .action(async (file: string, opts: ListOptions, cmd: Command) => {
      const estimate = await client(cmd).jobs.estimate(jobParams(file, opts));
      if (globals(cmd).json) json(estimate);
      else out(estimateText(estimate));
    });

  jobs
    .command("create")
    .summary("start a job from a CSV or text file")
    .description(`Starts a bulk job. The maximum possible cost is reserved up front; only conclusive answers are billed.\nTest-key jobs are complete at once.\n\n${FILE_HELP}`)
    .argument("<file>", "CSV or text file, or - for stdin")
    .addOption(checksOption())
    .option("--max-cost <amount>", "refuse (402 cost_limit_exceeded) if the maximum cost is higher, in USD")
    .option("--webhook <we_id>", "verified webhook endpoint to notify with job.completed")
    .option("--wait", "wait until the job is finished (a live progress bar on a terminal); exit 1 if it failed or was cancelled")
    .option("--no-progress", "with --wait: no progress bar or progress lines")
    .option("--idempotency-key <key>", "resend-safe key (default: a new one per run, reused by the SDK's retries)")
    .addHelpText(
      "after",
      `
Examples:
  svc jobs create numbers.csv --checks spam --max-cost 25 --wait
  svc jobs create list.txt --checks spam,email --json | jq -r .id`,
    )
    .action(async (file: string, opts: ListOptions & { wait?: boolean; progress: boolean; idempotencyKey?: string }, cmd: Command) => {
      const c = client(cmd);
      const created = await c.jobs.create(jobParams(file, opts), opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : undefined);
      if (!opts.wait) {
        if (globals(cmd).json) json(created);
        else out(jobText(created));
        return;
      }
      if (!globals(cmd).json) err(`Created ${created.id}: ${created.progress.total} rows${created.estimate ? `, max cost ${money(created.estimate.max_cost)}` : ""}.`);
      const done = isJobFinished(created) ? created : await waitWithProgress(c, created, { progress: opts.progress });
      if (globals(cmd).json) json(done);
      else out(jobText(done));
      process.exitCode = jobExitCode(done);
    });

  jobs
    .command("get")
    .summary("show a job: status, progress, cost")
    .argument("<id>", "job id (job_…)")
    .addOption(new Option("--wait <seconds>", `hold the request up to this long (0-${LIMITS.maxWaitSeconds}) until the job is final`).argParser(positiveInt("--wait", LIMITS.maxWaitSeconds, 0)))
    .action(async (id: string, opts: { wait?: number }, cmd: Command) => {
      const job = await client(cmd).jobs.get(id, opts.wait === undefined ? {} : { wait: opts.wait });
      if (globals(cmd).json) json(job);
      else out(jobText(job));
    });

  jobs
    .command("watch")
    .summary("follow a job until it is finished (progress bar on a terminal)")
    .description("Follows a job until it is completed, failed or cancelled: a live progress bar when stderr is a terminal,\nplain progress lines otherwise. Exits 0 when it completed, 1 when it failed or was cancelled.\nCtrl-C stops watching (the job goes on).")
    .argument("<id>", "job id (job_…)")
    .option("--no-progress", "no progress bar or progress lines, only the final job")
    .action(async (id: string, opts: { progress: boolean }, cmd: Command) => {
      const c = client(cmd);
      const job = await c.jobs.get(id);
      const done = isJobFinished(job) ? job : await waitWithProgress(c, job, { progress: opts.progress });
      if (globals(cmd).json) json(done);
      else out(jobText(done));
      process.exitCode = jobExitCode(done);
    });

  jobs
    .command("cancel")
    .summary("cancel a running job")
    .description("Cancels a running job: rows not yet sent to a data source are released and never charged;\nrows already sent finish and are billed. A finished job is left alone (see `svc jobs purge`).")
    .argument("<id>", "job id (job_…)")
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const c = client(cmd);
      const job = await c.jobs.get(id);
      // DELETE on a finished job deletes its results: never do that under the name "cancel".
      if (isJobFinished(job)) throw new UsageError(`${id} is already ${job.status}; nothing to cancel. To delete its results, run: svc jobs purge ${id} --yes`);
      const after = await c.jobs.cancel(id);
      if (globals(cmd).json) json(after);
      else out(`${jobText(after)}\n\nCancelled. Rows already sent to a data source finish and are billed.`);
    });

  jobs
    .command("purge")
    .summary("delete a finished job's results now")
    .argument("<id>", "job id (job_…)")
    .option("--yes", "confirm: the per-row results are deleted for good")
    .action(async (id: string, opts: { yes?: boolean }, cmd: Command) => {
      if (!opts.yes) throw new UsageError(`Purging deletes ${id}'s results for good; add --yes to confirm.`);
      const c = client(cmd);
      const job = await c.jobs.get(id);
      if (!isJobFinished(job)) throw new UsageError(`${id} is still ${job.status}; cancel it first (svc jobs cancel ${id}).`);
      const after = await c.jobs.purge(id);
      if (globals(cmd).json) json(after);
      else out(`${jobText(after)}\n\nResults deleted.`);
    });

  jobs
    .command("results")
    .summary("print a job's results, row by row")
    .description("Prints every result row of a finished job, page by page (a table; with --json, one result item\nper line: NDJSON, the API's result items).")
    .argument("<id>", "job id (job_…)")
    .option("--service <code>", "check the filters apply to (default: the job's first check)")
    .option("--status <status>", "only rows whose --service check has this status (ok, unknown, …)")
    .addOption(new Option("--registered <value>", "only rows whose --service answer is registered").choices(["true", "false", "null"]))
    .addOption(new Option("--limit <rows>", "print at most this many rows").argParser(positiveInt("--limit")))
    .addOption(new Option("--page-size <rows>", `rows per request (1-${PAGE_SIZE_MAX})`).argParser(positiveInt("--page-size", PAGE_SIZE_MAX)).default(PAGE_SIZE_MAX))
    .addHelpText("after", "\nExamples:\n  svc jobs results job_… --service spam --registered true\n  svc jobs results job_… --json | jq -r 'select(.checks[0].attributes.risk_level == \"high\") | .e164'")
    .action(async (id: string, opts: { service?: string; status?: string; registered?: string; limit?: number; pageSize: number }, cmd: Command) => {
      const filters: ResultsFilters = { limit: Math.min(opts.pageSize, opts.limit ?? Infinity) };
      if (opts.service) filters.service = opts.service;
      if (opts.status) filters.status = opts.status;
      if (opts.registered !== undefined) filters.registered = opts.registered === "null" ? null : opts.registered === "true";
      const asJson = globals(cmd).json;
      const tableOut = new StreamingTable(ROW_HEADERS, ["right"], [3, 16, 11, 12]);
      let left = opts.limit ?? Infinity;
      for await (const page of client(cmd).jobs.results(id, filters).pages()) {
        const rows = page.data.slice(0, left);
        left -= rows.length;
        if (asJson) for (const r of rows) jsonLine(r);
        else tableOut.add(rowLines(rows));
        await flushStdout();
        if (left <= 0) break;
      }
      if (!asJson && tableOut.empty) err("No rows.");
    });

  jobs
    .command("download")
    .summary("save a job's whole result file (CSV or NDJSON)")
    .description("Streams the job's result file to a file (never held in memory). The format follows the file name\n(.ndjson or .jsonl: NDJSON, else CSV) unless --format says otherwise; `-o -` writes to stdout.")
    .argument("<id>", "job id (job_…)")
    .requiredOption("-o, --output <file>", "where to write the file (`-` for stdout)")
    .addOption(new Option("--format <format>", "csv or ndjson (default: from the file name)").choices(["csv", "ndjson"]))
    .addHelpText("after", "\nExamples:\n  svc jobs download job_… -o results.csv\n  svc jobs download job_… -o - --format ndjson | jq .")
    .action(async (id: string, opts: { output: string; format?: DownloadFormat }, cmd: Command) => {
      const format: DownloadFormat = opts.format ?? (/\.(ndjson|jsonl)$/i.test(opts.output) ? "ndjson" : "csv");
      const toStdout = opts.output === "-";
      const result = await client(cmd).jobs.download(id, { format, to: toStdout ? process.stdout : opts.output, end: !toStdout });
      if (toStdout) return;
      if (globals(cmd).json) json({ job: id, file: opts.output, format: result.format, bytes: result.bytes, content_type: result.contentType, request_id: result.requestId });
      else err(`Saved ${id}'s results (${format.toUpperCase()}, ${result.bytes.toLocaleString("en-US")} bytes) to ${opts.output}`);
    });

  return jobs;
}
