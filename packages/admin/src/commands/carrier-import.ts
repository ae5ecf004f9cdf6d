import { stat } from "node:fs/promises";
import { randomBase62 } from "@svc/domain";
import { replaceCarrierBlocks } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";
import { progressBar } from "../delimited/progress";
import { skippedSummary } from "../delimited/read-records";
import { CARRIER_SOURCES, runCarrierImport, type CarrierEncoding, type CarrierImportOutcome, type CarrierSkipReason } from "../carriers";

const ENCODINGS: Readonly<Record<string, CarrierEncoding | null>> = { auto: null, "utf-8": "utf-8", utf8: "utf-8", "windows-1252": "windows-1252", cp1252: "windows-1252", latin1: "windows-1252", "iso-8859-1": "windows-1252" };

/** `--file` may be given several times (one source's data often comes as several files); every other flag once. */
function splitFiles(args: string[]): { files: string[]; rest: string[] } {
  const files: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    if (arg === "--file") {
      const value = args[i + 1];
      if (value === undefined || value.startsWith("--")) throw new CliError("--file needs a path");
      files.push(value);
      i += 1;
    } else if (arg.startsWith("--file=")) files.push(arg.slice("--file=".length));
    else rest.push(arg);
  }
  return { files, rest };
}

/**
 * carrier import --source nanpa-co|nanpa-thousands|bnetza|ofcom --file PATH [--file PATH…] [--encoding auto|utf-8|windows-1252]:
 * replaces every block of that source with the files' blocks, in one transaction, and records the run.
 * Importing the same files again leaves the same blocks.
 */
export async function carrierImport(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const { files, rest } = splitFiles(args);
  const flags = parseFlags(rest, ["source", "encoding"]);
  const sourceName = required(flags, "source").toLowerCase();
  const spec = CARRIER_SOURCES[sourceName];
  if (!spec) throw new CliError(`unknown source "${sourceName}"; sources are ${Object.keys(CARRIER_SOURCES).join(", ")}`);
  if (files.length === 0 || files.some((f) => f.trim() === "")) throw new CliError("--file is required");
  const encodingName = (flags.encoding ?? "auto").trim().toLowerCase();
  if (!(encodingName in ENCODINGS)) throw new CliError("--encoding must be auto, utf-8 or windows-1252");
  let totalBytes = 0;
  for (const file of files) {
    const info = await stat(file).catch(() => null);
    if (!info) throw new CliError(`cannot read --file "${file}": no such file`);
    if (!info.isFile()) throw new CliError(`--file "${file}" is not a file`);
    totalBytes += info.size;
  }

  const importId = `cimp_${randomBase62(22)}`;
  const bar = progressBar(totalBytes, `carrier import ${spec.name}`);
  let outcome;
  try {
    outcome = await replaceCarrierBlocks(ctx.store.pool, { id: importId, source: spec.source }, async (write) => {
      const perFile: CarrierImportOutcome[] = [];
      let done = 0;
      let rowsBefore = 0;
      for (const file of files) {
        const one = await runCarrierImport({
          spec,
          file,
          encoding: ENCODINGS[encodingName] ?? null,
          write,
          onProgress: bar ? (bytes, rows) => bar.update(done + bytes, rowsBefore + rows) : undefined,
        });
        perFile.push(one);
        done += (await stat(file)).size;
        rowsBefore += one.rowsRead;
      }
      const skipped: Partial<Record<CarrierSkipReason, number>> = {};
      for (const one of perFile) for (const [reason, n] of Object.entries(one.skipped)) skipped[reason as CarrierSkipReason] = (skipped[reason as CarrierSkipReason] ?? 0) + (n ?? 0);
      // carrier_imports.file_sha256: the files' digests in the order given.
      return { perFile, skipped, rowsRead: rowsBefore, fileSha256: perFile.map((f) => f.fileSha256).join(",") };
    });
  } finally {
    bar?.stop();
  }
  const rowsSkipped = skippedSummary(outcome.skipped);
  return {
    object: "carrier_import",
    id: importId,
    source: spec.name,
    block_source: spec.source,
    files: outcome.perFile.map((f) => ({ file_sha256: f.fileSha256, encoding: f.encoding, rows_read: f.rowsRead })),
    rows_read: outcome.rowsRead,
    blocks_stored: outcome.blocksStored,
    blocks_replaced: outcome.blocksReplaced,
    rows_duplicate: outcome.rowsRead - outcome.blocksStored - rowsSkipped.total,
    rows_skipped: rowsSkipped,
    created_at: outcome.createdAt.toISOString(),
  };
}
