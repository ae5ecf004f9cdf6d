import { ApiError, ROUTES, validateBody, type JobRequest, type RouteDef, type Static } from "@svc/contract";
import { answerTestRows, initialLiveRows, testProfileFor, type CheckCode, type InputKind, type PreparedRow, type ResultRow } from "@svc/domain";
import { identifierHash, renderRowsChunk, type RowsCopy, type TestUsage } from "@svc/store";
import { requestHash } from "../http/request-hash";
import { assertStorableInput } from "../http/text-input";
import { jobBodyFromForm, type JobForm } from "./csv-upload";
import { countByKind, familyDigest, prepareRequest, toRefusal, type CallerFacts, type PlanFacts, type Refusal } from "../planning/prepare";
import { storedRow } from "../storing/result-rows";
import { testUsage } from "../storing/test-usage";

/**
 * The CPU-heavy part of a bulk request (POST /v1/jobs and /v1/jobs/estimate, JSON
 * or CSV): decoding and validating the body, hashing it for Idempotency-Key,
 * parsing and judging up to 50,000 identifiers, keying them for the answer cache,
 * and rendering the job's rows for COPY. Runs on an intake thread (intake-worker)
 * and returns only counts, small fields and flat buffers: a 50,000-row structure
 * cloned back would cost the event loop tens of milliseconds.
 */
export type BulkOperation = "estimateJob" | "createJob";

export type BulkBody = { type: "json"; bytes: Uint8Array } | { type: "form"; form: JobForm };

export type IntakeInput = {
  operation: BulkOperation;
  body: BulkBody;
  caller: CallerFacts;
  /** The request's clock (ms), for test answers. */
  now: number;
  /** createJob: the id the job will have (its rows carry it). */
  jobId: string | null;
};

/** A job request's fields other than the identifiers (the contract's JobRequest without `numbers` and `emails`). */
export type JobFields = Omit<JobRequestBody, "numbers" | "emails">;
type JobRequestBody = Static<typeof JobRequest>;

export type RowCounts = { total: number; valid: number; invalid: number; duplicate: number };

export type Intake =
  /** The body cannot be read or does not match the schema: refused before the Idempotency-Key is looked at. */
  | { ok: false; refusal: Refusal }
  | {
      ok: true;
      fields: JobFields;
      /** What an Idempotency-Key is bound to. */
      hash: string;
      plan: PlanFacts;
      counts: Record<"rows" | InputKind, RowCounts>;
      /** Live keys: keyed hashes (32 bytes each) of the valid rows of each kind, for counting cached answers. */
      cacheKeys: Record<InputKind, Uint8Array> | null;
      /** createJob: the rows rendered for COPY (streamed: still being rendered on the thread). */
      rows: RowsCopy | null;
      /** createJob with a test key: usage to record. */
      usage: TestUsage | null;
      /** Streamed rows: the usage, once the last row is rendered (`usage` is then null). */
      usageLater?: Promise<TestUsage | null>;
    };

/**
 * Where an accepted createJob intake sends its rows as it renders them (intake-worker:
 * a MessagePort to the event loop, which writes them into the job's COPY meanwhile).
 * `head` comes first, as soon as the request is planned: everything but the rows'
 * text (`rows` null, their count given) and the usage; then the rows in pieces; then
 * `end` with the usage. Rows are answered and rendered only for a request that is
 * not refused by its plan; the event loop may still refuse it afterwards (its
 * Idempotency-Key, money, availability), and then drops what arrives.
 */
export type RowSink = {
  head(intake: Extract<Intake, { ok: true }>, rowCount: number): void;
  rows(text: Uint8Array): void;
  end(usage: TestUsage | null): void;
};

/** What a RowSink over a MessagePort sends (intake-worker → BulkIntake). */
export type RowMessage =
  | { type: "head"; intake: Extract<Intake, { ok: true }>; rowCount: number }
  | { type: "rows"; text: Uint8Array }
  | { type: "end"; usage: TestUsage | null };

/** Rows answered and rendered per piece sent to the COPY (~460 bytes a row: ~1 MB). */
export const ROWS_PER_PIECE = 2_000;

const routeOf = (operation: BulkOperation) => ROUTES.find((r) => r.operationId === operation) as RouteDef;

/** JSON as express.json reads it (strict: an object or array at the top), never echoing the body. */
function parseJson(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return undefined;
  try {
    if (first !== "{" && first !== "[") throw new SyntaxError("not strict JSON");
    return JSON.parse(text);
  } catch {
    throw new ApiError("invalid_request", { message: "The request body is not valid JSON.", suggestion: "Send a JSON object with Content-Type: application/json." });
  }
}

function readBody(body: BulkBody): Record<string, unknown> {
  if (body.type === "form") {
    try {
      return jobBodyFromForm(body.form);
    } catch (err) {
      throw err instanceof ApiError ? err : new ApiError("invalid_request", { param: "file" });
    }
  }
  const parsed = parseJson(body.bytes);
  if (parsed === undefined || parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ApiError("invalid_request", { message: "The request body must be a JSON object." });
  }
  return parsed as Record<string, unknown>;
}

function countRows(rows: readonly PreparedRow[], kind?: InputKind): RowCounts {
  const c: RowCounts = { total: 0, valid: 0, invalid: 0, duplicate: 0 };
  for (const r of rows) {
    if (kind && r.kind !== kind) continue;
    c.total += 1;
    if (r.status === "invalid") c.invalid += 1;
    else if (r.status === "duplicate") c.duplicate += 1;
    else c.valid += 1;
  }
  return c;
}

/** Keyed hashes of the valid rows of one kind, end to end in one buffer. */
function cacheKeysOf(rows: readonly PreparedRow[], kind: InputKind, secret: string): Uint8Array {
  const valid = rows.filter((r) => r.kind === kind && r.status === "valid");
  const out = new Uint8Array(valid.length * 32);
  valid.forEach((r, i) => out.set(identifierHash(secret, (r.e164 ?? r.email) as string), i * 32));
  return out;
}

/** A test job's rows: final at once; a documented outage value reads as a source that could not answer. */
function testJobRows(rows: readonly PreparedRow[], checks: readonly CheckCode[], now: Date): ResultRow[] {
  const answered = answerTestRows(rows, checks, now, true);
  // Settled answers are never pending: without an outage value every row is final as answered.
  if (!answered.unavailable) return answered.rows;
  return answered.rows.map((r, i) => {
    const prepared = rows[i];
    const outage = prepared?.status === "valid" && testProfileFor(prepared)?.unavailable === true;
    // Almost every row is final as answered: kept as it is (no copy of 50,000 rows).
    if (!outage && !r.checks.some((c) => c.status === "pending")) return r;
    return {
      ...r,
      checks: r.checks.map((c) => (outage || c.status === "pending" ? { ...c, status: "unknown" as const, registered: null, attributes: null } : c)),
    };
  });
}

/**
 * Without a sink, a createJob's rows come back rendered in `rows`; with one, they go
 * to the sink as they are rendered and the result holds none.
 */
export function runIntake(input: IntakeInput, cacheSecret: string, sink?: RowSink): Intake {
  const route = routeOf(input.operation);
  let body: JobRequestBody;
  let hash: string;
  try {
    const raw = readBody(input.body);
    assertStorableInput(raw, "body");
    // The body as sent (validation fills in defaults), as small requests are hashed on the event loop.
    hash = requestHash("POST", route.path, raw);
    body = validateBody<JobRequestBody>(route.body as NonNullable<RouteDef["body"]>, raw);
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, refusal: toRefusal(err) };
    throw err;
  }
  const { numbers, emails, ...fields } = body;
  const kind = input.operation === "createJob" ? "job" : "estimate";
  const prepared = prepareRequest(body, input.caller, kind, familyDigest(cacheSecret));
  // Limits broken by an uploaded file are reported against `file`.
  if (prepared.early?.code === "too_many_numbers" && input.body.type === "form") prepared.early = { ...prepared.early, param: "file" };
  const { rows } = prepared;
  const plan: PlanFacts = { checks: prepared.checks, checksTotal: prepared.checksTotal, early: prepared.early, late: prepared.late, families: prepared.families, counts: countByKind(rows) };
  const refused = prepared.early !== null || prepared.late !== null;
  const now = new Date(input.now);
  const accepted: Extract<Intake, { ok: true }> = {
    ok: true,
    fields,
    hash,
    plan,
    counts: { rows: countRows(rows), number: countRows(rows, "number"), email: countRows(rows, "email") },
    cacheKeys: !refused && input.caller.livemode ? { number: cacheKeysOf(rows, "number", cacheSecret), email: cacheKeysOf(rows, "email", cacheSecret) } : null,
    rows: null,
    usage: null,
  };
  if (refused || input.operation !== "createJob" || !input.jobId) return accepted;
  const jobId = input.jobId;
  const render = (emit: (text: Uint8Array) => void): TestUsage | null => {
    const answered: ResultRow[] = [];
    for (let at = 0; at < rows.length; at += ROWS_PER_PIECE) {
      const piece = rows.slice(at, at + ROWS_PER_PIECE);
      const results = input.caller.livemode ? initialLiveRows(piece, prepared.checks) : testJobRows(piece, prepared.checks, now);
      emit(renderRowsChunk(jobId, results.map(storedRow)));
      if (!input.caller.livemode) for (const r of results) answered.push(r);
    }
    return input.caller.livemode ? null : testUsage(prepared.checks, answered, now);
  };
  if (sink) {
    sink.head(accepted, rows.length);
    sink.end(render((text) => sink.rows(text)));
    return accepted;
  }
  const pieces: Uint8Array[] = [];
  const usage = render((text) => pieces.push(text));
  return { ...accepted, rows: { count: rows.length, text: concat(pieces) }, usage };
}

/** One buffer of its own (transferable) holding the pieces end to end. */
function concat(pieces: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
