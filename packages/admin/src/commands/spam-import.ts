import { stat } from "node:fs/promises";
import { randomBase62 } from "@svc/domain";
import { recordSpamImport } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";
import { progressBar } from "../delimited/progress";
import { skippedSummary } from "../delimited/read-records";
import { isSpamCountry, runSpamImport, SPAM_COUNTRIES, SPAM_SOURCES } from "../spam";

const FORMATS = { csv: ",", tsv: "\t" } as const;

/**
 * spam import --source ftc|fcc|regulator|community|unassigned --file PATH [--format csv|tsv] [--country US|CA|DE]:
 * reads a report file into spam_reports (number, class, source, category, day only) and records the run.
 * Re-importing the same file adds nothing.
 */
export async function spamImport(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const flags = parseFlags(args, ["source", "file", "format", "country"]);
  const sourceName = required(flags, "source").toLowerCase();
  const spec = SPAM_SOURCES[sourceName];
  if (!spec) throw new CliError(`unknown source "${sourceName}"; sources are ${Object.keys(SPAM_SOURCES).join(", ")}`);
  const file = required(flags, "file");
  const format = (flags.format ?? "csv").trim().toLowerCase();
  if (!(format in FORMATS)) throw new CliError("--format must be csv or tsv");
  let country: (typeof SPAM_COUNTRIES)[number] | null = null;
  if (flags.country !== undefined) {
    if (!spec.acceptsCountry) throw new CliError(`--country does not apply to --source ${spec.name}: its national numbers are US/CA`);
    const value = flags.country.trim().toUpperCase();
    if (!isSpamCountry(value)) throw new CliError(`--country must be one of ${SPAM_COUNTRIES.join(", ")}`);
    country = value;
  }
  const info = await stat(file).catch(() => null);
  if (!info) throw new CliError(`cannot read --file "${file}": no such file`);
  if (!info.isFile()) throw new CliError(`--file "${file}" is not a file`);

  const importId = `simp_${randomBase62(22)}`;
  const bar = progressBar(info.size, `spam import ${spec.name}`);
  let outcome;
  try {
    outcome = await runSpamImport({
      spec,
      file,
      delimiter: FORMATS[format as keyof typeof FORMATS],
      country,
      importId,
      now: ctx.now(),
      sql: ctx.store.pool,
      onProgress: bar ? (bytes, rows) => bar.update(bytes, rows) : undefined,
    });
  } finally {
    bar?.stop();
  }
  const { createdAt } = await recordSpamImport(ctx.store.pool, {
    id: importId,
    source: spec.source,
    fileSha256: outcome.fileSha256,
    rowsRead: outcome.rowsRead,
    rowsAdded: outcome.rowsAdded,
  });
  const rowsSkipped = skippedSummary(outcome.skipped);
  return {
    object: "spam_import",
    id: importId,
    source: spec.name,
    report_source: spec.source,
    signal_class: spec.signalClass,
    file_sha256: outcome.fileSha256,
    rows_read: outcome.rowsRead,
    rows_added: outcome.rowsAdded,
    rows_duplicate: outcome.rowsRead - outcome.rowsAdded - rowsSkipped.total,
    rows_skipped: rowsSkipped,
    created_at: createdAt.toISOString(),
  };
}
