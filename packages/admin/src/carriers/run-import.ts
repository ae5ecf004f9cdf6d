import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { Transform } from "node:stream";
import { likeliestDelimiter } from "@svc/csv";
import type { CarrierBlockRow } from "@svc/store";
import { matchHeader, wrongHeader } from "../delimited/header";
import { fileError, readRecords } from "../delimited/read-records";
import { columnKey, type CarrierSkipReason, type CarrierSourceSpec } from "./types";

export type CarrierEncoding = "utf-8" | "windows-1252";
type Delimiter = "," | ";" | "\t";

export type CarrierImportRun = {
  spec: CarrierSourceSpec;
  file: string;
  /** Forced encoding; null = UTF-8 when the whole file is valid UTF-8, else Windows-1252. */
  encoding: CarrierEncoding | null;
  /** Writes one batch of blocks inside the import's transaction; returns how many were new. */
  write: (blocks: readonly CarrierBlockRow[]) => Promise<number>;
  /** Called as the file is parsed (bytes read, data rows seen). */
  onProgress?: (bytes: number, rows: number) => void;
};

export type CarrierImportOutcome = {
  fileSha256: string;
  encoding: CarrierEncoding;
  delimiter: Delimiter;
  rowsRead: number;
  skipped: Partial<Record<CarrierSkipReason, number>>;
};

/** First pass: SHA-256 of the bytes, and whether they are UTF-8 throughout (else the file is Windows-1252, as German exports often are). */
async function scan(file: string): Promise<{ sha256: string; utf8: boolean }> {
  const sha = createHash("sha256");
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let utf8 = true;
  try {
    for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
      sha.update(chunk);
      if (utf8) {
        try {
          decoder.decode(chunk, { stream: true });
        } catch {
          utf8 = false;
        }
      }
    }
    if (utf8) decoder.decode();
  } catch (err) {
    if (err instanceof TypeError) utf8 = false; // an incomplete sequence at the very end
    else fileError(file, err);
  }
  return { sha256: sha.digest("hex"), utf8 };
}

/** The separator of the header line: whichever of tab, semicolon and comma it holds most of (NANPA: tab, BNetzA: semicolon, others: comma). */
async function detectDelimiter(file: string): Promise<Delimiter> {
  const handle = await open(file, "r").catch((err: unknown) => fileError(file, err));
  try {
    const buffer = Buffer.alloc(16 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, bytesRead).toString("latin1").split(/\r?\n/)[0] ?? "";
    return likeliestDelimiter<Delimiter>(first, ["\t", ";", ","], ",");
  } finally {
    await handle.close();
  }
}

/** Maps the documented column names to their position in the header; refuses a header without them. */
function headerIndex(spec: CarrierSourceSpec, header: string[]): Map<string, number> {
  const { index, missing } = matchHeader(header, spec.columns, columnKey);
  const groups = spec.alternatives ?? [];
  const groupFound = groups.length === 0 || groups.some((g) => g.every((name) => index.has(columnKey(name))));
  if (!groupFound) missing.unshift(groups.map((g) => g.join(" + ")).join(" or "));
  if (missing.length > 0) {
    const expected = [...groups.slice(0, 1).flat(), ...spec.columns.filter((c) => c.required).map((c) => c.name)];
    throw wrongHeader(spec.name, missing, expected.join(", "), "docs/carrier-importers.md");
  }
  return index;
}

/**
 * Streams one allocation file into the import's transaction: hashed and checked
 * for UTF-8 in a first pass, then decoded (UTF-8 or Windows-1252), parsed record by
 * record (see readRecords; the separator found in the header) and written in
 * batches. Bad rows are counted by reason and skipped; a wrong header stops the
 * run before anything is written.
 */
export async function runCarrierImport(run: CarrierImportRun): Promise<CarrierImportOutcome> {
  const { spec } = run;
  const { sha256, utf8 } = await scan(run.file);
  const encoding: CarrierEncoding = run.encoding ?? (utf8 ? "utf-8" : "windows-1252");
  const delimiter = await detectDelimiter(run.file);

  let bytes = 0;
  const decoder = new TextDecoder(encoding);
  const decode = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(null, Buffer.from(decoder.decode(chunk, { stream: true }), "utf8"));
    },
    flush(done) {
      done(null, Buffer.from(decoder.decode(), "utf8"));
    },
  });

  const { rowsRead, skipped } = await readRecords({
    file: run.file,
    through: decode,
    delimiter,
    relaxColumnCount: true,
    formatName: "delimited text",
    doc: "docs/carrier-importers.md",
    header: (record) => headerIndex(spec, record),
    columnKey,
    read: (row) => spec.read(row),
    write: async (blocks: CarrierBlockRow[]) => {
      await run.write(blocks);
    },
    onProgress: (rows) => run.onProgress?.(bytes, rows),
  });
  return { fileSha256: sha256, encoding, delimiter, rowsRead, skipped };
}
