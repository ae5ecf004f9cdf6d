import type { Request } from "express";
import busboy from "busboy";
import { ApiError, LIMITS } from "@svc/contract";
import { likeliestDelimiter, readCsvText } from "@svc/csv";
import { parseNumber } from "@svc/domain";

const NUMBER_COLUMNS = new Set(["number", "numbers", "phone", "phone_number", "phonenumber", "phone number", "msisdn", "mobile", "telephone", "tel", "e164"]);
const EMAIL_COLUMNS = new Set(["email", "emails", "e-mail", "email_address", "email address", "mail"]);
const COUNTRY_COLUMNS = new Set(["country", "country_code", "countrycode"]);

const fileError = (message: string) => new ApiError("invalid_request", { param: "file", message, suggestion: "See docs/csv-upload.md for the accepted layout." });

/**
 * Reads the identifiers out of an uploaded CSV (docs/csv-upload.md): UTF-8 with or
 * without BOM, comma, semicolon or tab separated, quoted fields, CRLF or LF. With a
 * header row, `number`/`phone`/… columns hold numbers, `email`/… columns e-mails,
 * and a `country` column (ISO alpha-2) reads national numbers in that country;
 * without one, each cell is an e-mail if it holds an `@`, else a number.
 */
export function identifiersFromCsv(file: Buffer): { numbers: string[]; emails: string[] } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(file);
  } catch {
    throw fileError("The file must be UTF-8 text.");
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const firstLine = text.slice(0, Math.max(0, text.search(/\r?\n/)) || text.length);
  const delimiter = likeliestDelimiter(firstLine, [",", ";", "\t"], ",");
  let records: string[][];
  try {
    records = readCsvText(text, { delimiter, relaxColumnCount: true });
  } catch {
    throw fileError("The file is not valid CSV (check quotes and separators).");
  }
  const header = records[0]?.map((h) => h.toLowerCase());
  const hasHeader = Boolean(header?.some((h) => NUMBER_COLUMNS.has(h) || EMAIL_COLUMNS.has(h) || COUNTRY_COLUMNS.has(h)));
  const numbers: string[] = [];
  const emails: string[] = [];
  const push = (list: string[], value: string) => {
    if (numbers.length + emails.length >= LIMITS.jobIdentifiers + 1) return; // enough to know it is too many
    list.push(value);
  };
  if (hasHeader && header) {
    const numberCols = header.flatMap((h, i) => (NUMBER_COLUMNS.has(h) ? [i] : []));
    const emailCols = header.flatMap((h, i) => (EMAIL_COLUMNS.has(h) ? [i] : []));
    const countryCol = header.findIndex((h) => COUNTRY_COLUMNS.has(h));
    if (numberCols.length + emailCols.length === 0) throw fileError("The header names no number or e-mail column.");
    for (const record of records.slice(1)) {
      const country = countryCol >= 0 ? (record[countryCol] ?? "").toUpperCase() : "";
      for (const i of numberCols) {
        const cell = record[i];
        if (!cell) continue;
        // A national number with a country on its row is normalised here; everything else is checked as sent.
        const parsed = /^[A-Z]{2}$/.test(country) ? parseNumber(cell, country) : null;
        push(numbers, parsed && parsed.valid ? parsed.e164 : cell);
      }
      for (const i of emailCols) if (record[i]) push(emails, record[i] as string);
    }
  } else {
    for (const record of records) for (const cell of record) if (cell) push(cell.includes("@") ? emails : numbers, cell);
  }
  if (numbers.length + emails.length === 0) throw fileError("The file holds no numbers or e-mail addresses.");
  if (numbers.length + emails.length > LIMITS.jobIdentifiers) {
    throw new ApiError("too_many_numbers", { param: "file", message: `At most ${LIMITS.jobIdentifiers} numbers and e-mail addresses per job.` });
  }
  return { numbers, emails };
}

/** An uploaded job form as received: the file's bytes (in a buffer of their own, so it can be transferred to an intake thread) and the fields. */
export type JobForm = { file: Uint8Array; fields: Array<[name: string, values: string[]]> };

const FORM_FIELDS = ["checks", "max_cost", "webhook_endpoint_id", "progress_events"];

/**
 * Turns a received multipart/form-data job (part `file`, plus fields `checks`,
 * `max_cost`, `webhook_endpoint_id`, `progress_events`) into the JSON body the job
 * schema validates, so both forms go through the same validation and idempotency.
 * Pure CPU (the CSV is parsed here): runs on an intake thread.
 */
export function jobBodyFromForm(form: JobForm): Record<string, unknown> {
  // A Map: field names are the client's (`__proto__`, `constructor`…).
  const fields = new Map(form.fields);
  const field = (name: string) => fields.get(name)?.[0];
  const { numbers, emails } = identifiersFromCsv(Buffer.from(form.file.buffer, form.file.byteOffset, form.file.byteLength));
  const body: Record<string, unknown> = { checks: (fields.get("checks") ?? []).flatMap((c) => c.split(",")).map((c) => c.trim()).filter(Boolean) };
  if (numbers.length) body.numbers = numbers;
  if (emails.length) body.emails = emails;
  const maxCost = field("max_cost");
  if (maxCost !== undefined) body.max_cost = { amount: maxCost };
  const webhookEndpointId = field("webhook_endpoint_id");
  if (webhookEndpointId !== undefined) body.webhook_endpoint_id = webhookEndpointId;
  const progress = field("progress_events");
  if (progress !== undefined) {
    if (progress !== "true" && progress !== "false") throw new ApiError("invalid_request", { param: "progress_events", message: "progress_events must be true or false." });
    body.progress_events = progress === "true";
  }
  if ([...fields.keys()].some((f) => !FORM_FIELDS.includes(f))) {
    throw new ApiError("invalid_request", { param: null, message: "The form contains a field this endpoint does not accept." });
  }
  return body;
}

/**
 * Receives a multipart/form-data job on the event loop: streams the file part into
 * one buffer (bounded by `limitBytes`) and keeps the fields. Framing problems are
 * refused here; the file's content is read later (jobBodyFromForm).
 */
export function receiveJobForm(req: Request, limitBytes: number): Promise<JobForm> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { fileSize: limitBytes, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 } });
    } catch {
      reject(new ApiError("invalid_request", { param: "file", message: "The multipart body is malformed." }));
      return;
    }
    const fields = new Map<string, string[]>();
    const chunks: Buffer[] = [];
    let size = 0;
    let sawFile = false;
    let failed = false;
    const fail = (err: ApiError) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      req.resume();
      reject(err);
    };
    bb.on("field", (name, value) => fields.set(name, [...(fields.get(name) ?? []), value]));
    bb.on("file", (name, stream) => {
      if (name !== "file") {
        stream.resume();
        fail(new ApiError("invalid_request", { param: "file", message: "The file must be sent in the part named `file`." }));
        return;
      }
      sawFile = true;
      stream.on("data", (d: Buffer) => {
        chunks.push(d);
        size += d.length;
      });
      stream.on("limit", () => fail(new ApiError("payload_too_large", { param: "file" })));
      // A body cut off inside the file part errors the file stream, not only busboy.
      stream.on("error", () => fail(new ApiError("invalid_request", { param: "file", message: "The multipart body is malformed." })));
    });
    bb.on("fieldsLimit", () => fail(new ApiError("invalid_request", { param: null, message: "The form has too many fields." })));
    bb.on("filesLimit", () => fail(new ApiError("invalid_request", { param: "file", message: "Send one file per job." })));
    bb.on("error", () => fail(new ApiError("invalid_request", { param: "file", message: "The multipart body is malformed." })));
    bb.on("close", () => {
      if (failed) return;
      if (!sawFile) return fail(new ApiError("invalid_request", { param: "file", message: "A CSV file in the part `file` is required." }));
      resolve({ file: ownedBytes(chunks, size), fields: [...fields] });
    });
    req.pipe(bb);
  });
}

/** Copies chunks into one buffer of their own (never a slice of Node's shared pool, which must not be transferred). */
export function ownedBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
