import { LIMITS } from "../contract";
import { copyDownload, type DownloadResult, type DownloadTarget } from "../download";
import { InvalidArgumentError, InvalidResponseError, TimeoutError } from "../errors";
import { fileToBlob, type FileInput } from "../files";
import { operation, type IdempotentRequestOptions, type RequestOptions, type Transport } from "../transport";
import type { Estimate, Job, JobParams, ResultRow, ResultsPage } from "../types";
import { pace } from "./lookups";

/** A job from a CSV file, sent as multipart/form-data (see docs/csv-upload.md). */
export interface CsvJobParams {
  /** A file path (Node, Bun, Deno), a Blob/File, bytes, a web ReadableStream or a Node Readable. */
  file: FileInput;
  /** File name sent with the upload (default: the path's base name, else `upload.csv`). */
  filename?: string;
  checks: string[];
  max_cost?: JobParams["max_cost"];
  webhook_endpoint_id?: string;
  progress_events?: boolean;
}

/** JSON lists (`numbers`, `emails`) or a CSV upload (`file`). */
export type JobCreateParams = JobParams | CsvJobParams;

export interface JobGetParams {
  /** Seconds (0–30) the API holds the request until the job reaches a final status. */
  wait?: number;
}

export interface ResultsFilters {
  /** Check code or alias the filters apply to (default: the job's first check). */
  service?: string;
  /** Only rows whose `service` check has this status (`ok`, `unknown`, …). */
  status?: string;
  /** Only rows whose `service` answer is registered true / false / null. */
  registered?: boolean | null;
  /** Rows per page (API default 100, maximum 1,000). */
  limit?: number;
}

export interface ResultsPageParams extends ResultsFilters {
  /** `next_cursor` of the previous page. */
  after?: string | null;
}

export interface WaitForJobOptions extends RequestOptions {
  /** Called with the job after every poll that shows a change (and after the first). */
  onProgress?: (job: Job) => void;
  /** Seconds each poll is held by the API (its `wait`). Default 30, the API's maximum. */
  pollWaitSeconds?: number;
  /** Give up with a `timeout` error after this many ms. Default: no limit. */
  maxWaitMs?: number;
}

export type DownloadFormat = "csv" | "ndjson";

export interface DownloadOptions extends RequestOptions {
  format: DownloadFormat;
  /** A file path, a Node Writable or a web WritableStream. */
  to: DownloadTarget;
  /** End a Node Writable when done (default true; pass false for process.stdout you keep using). */
  end?: boolean;
}

export interface DownloadStream {
  /** The file, as it arrives. Read it to the end or cancel it. */
  stream: ReadableStream<Uint8Array>;
  contentType: string | null;
  requestId: string | null;
}

/** True once a job is final and nothing of it is still running (`finished_at` is set). */
export const isJobFinished = (job: Pick<Job, "status" | "finished_at">): boolean => job.finished_at != null || job.status === "completed" || job.status === "failed";

/** Bulk jobs: estimate, create, read, wait, cancel or purge, results, download. */
export class Jobs {
  readonly #t: Transport;
  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** Counts a list and gives its maximum cost. Free: stores nothing, checks nothing. */
  async estimate(params: JobCreateParams, options?: RequestOptions): Promise<Estimate> {
    return (await this.#t.call<Estimate>(operation("estimateJob"), { ...(await body(params)), options })).data;
  }

  /**
   * Starts a job of up to 50,000 identifiers from arrays or a CSV file. The maximum
   * cost is reserved up front; test-key jobs are `completed` in this answer.
   * An Idempotency-Key is generated once and reused by every retry.
   */
  async create(params: JobCreateParams, options?: IdempotentRequestOptions): Promise<Job> {
    return (await this.#t.call<Job>(operation("createJob"), { ...(await body(params)), options })).data;
  }

  /** Reads a job; with `wait`, the API holds the request until the job is final or the time is up. */
  async get(id: string, params: JobGetParams = {}, options?: RequestOptions): Promise<Job> {
    return (await this.#t.call<Job>(operation("getJob"), { id, query: { wait: params.wait }, waitSeconds: params.wait, options })).data;
  }

  /** DELETE /v1/jobs/{id}: cancels a running job, or purges a finished job's results. Resolves with the job afterwards. */
  async cancel(id: string, options?: RequestOptions): Promise<Job> {
    return (await this.#t.call<Job>(operation("deleteJob"), { id, options })).data;
  }

  /** The same request as `cancel`, named for finished jobs: deletes their per-row results now. */
  purge(id: string, options?: RequestOptions): Promise<Job> {
    return this.cancel(id, options);
  }

  /**
   * Waits until the job is finished, using the API's long poll (`wait`, up to 30 s a
   * request), never a tight loop. Resolves with the final job, whatever its status.
   */
  async waitForJob(id: string, options: WaitForJobOptions = {}): Promise<Job> {
    const { onProgress, pollWaitSeconds = LIMITS.maxWaitSeconds, maxWaitMs, ...request } = options;
    const deadline = maxWaitMs === undefined ? Infinity : Date.now() + maxWaitMs;
    let last = "";
    for (;;) {
      const left = deadline - Date.now();
      const wait = Math.max(0, Math.min(pollWaitSeconds, Math.ceil(left / 1000)));
      const started = Date.now();
      const job = await this.get(id, { wait }, request);
      const seen = `${job.status}:${JSON.stringify(job.progress)}:${job.finished_at}`;
      if (seen !== last) {
        last = seen;
        onProgress?.(job);
      }
      if (isJobFinished(job)) return job;
      if (Date.now() >= deadline) throw new TimeoutError(`The job did not finish within ${maxWaitMs} ms.`, { attempts: 0, retryable: true });
      await pace(started, request.signal);
    }
  }

  /** One page of result items, in input order. */
  async resultsPage(id: string, params: ResultsPageParams = {}, options?: RequestOptions): Promise<ResultsPage> {
    const { after, ...filters } = params;
    return (await this.#t.call<ResultsPage>(operation("listJobResults"), { id, query: { ...query(filters), after: after ?? undefined }, options })).data;
  }

  /**
   * Every result item of the job, following `next_cursor` page by page:
   * `for await (const row of client.jobs.results(id)) …`; `.pages()` walks pages instead.
   */
  results(id: string, filters: ResultsFilters = {}, options?: RequestOptions): ResultsIterable {
    return new ResultsIterable((after) => this.resultsPage(id, { ...filters, after }, options));
  }

  /**
   * Streams the whole result file (CSV or NDJSON) to a file path, a Node Writable or
   * a WritableStream, chunk by chunk: it is never held in memory.
   */
  async download(id: string, options: DownloadOptions): Promise<DownloadResult> {
    const { format, to, end, ...request } = options ?? ({} as DownloadOptions);
    if (to === undefined || to === null) throw new InvalidArgumentError("to", "`to` (a file path, a Node Writable or a WritableStream) is required.");
    const open = await this.#open(id, format, request);
    return copyDownload(open, to, { format, idleTimeoutMs: request.timeoutMs ?? this.#t.timeoutMs, end, signal: request.signal });
  }

  /** The result file as a web ReadableStream, for callers who handle the bytes themselves. */
  async downloadStream(id: string, options: RequestOptions & { format: DownloadFormat }): Promise<DownloadStream> {
    const { format, ...request } = options ?? ({} as { format: DownloadFormat });
    const open = await this.#open(id, format, request);
    const body = open.response.body;
    if (!body) throw new InvalidResponseError("The download has no body.", { status: open.response.status, requestId: open.requestId, attempts: open.attempts });
    return { stream: body, contentType: open.response.headers.get("content-type"), requestId: open.requestId };
  }

  #open(id: string, format: DownloadFormat, options: RequestOptions) {
    if (typeof format !== "string" || !format) throw new InvalidArgumentError("format", "`format` is required: \"csv\" or \"ndjson\".");
    return this.#t.open(operation("downloadJobResults"), { id, query: { format }, accept: format === "csv" ? "text/csv" : "application/x-ndjson", options });
  }
}

/** Result items of a job: async-iterable row by row, or page by page with `pages()`. */
export class ResultsIterable implements AsyncIterable<ResultRow> {
  readonly #fetchPage: (after: string | undefined) => Promise<ResultsPage>;
  constructor(fetchPage: (after: string | undefined) => Promise<ResultsPage>) {
    this.#fetchPage = fetchPage;
  }

  async *pages(): AsyncGenerator<ResultsPage> {
    let after: string | undefined;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.#fetchPage(after);
      yield page;
      const next = page.next_cursor;
      if (typeof next !== "string" || next === "") return;
      if (seen.has(next)) throw new InvalidResponseError("The API returned the same next_cursor twice.", { status: 200, requestId: null, attempts: 1 });
      seen.add(next);
      after = next;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ResultRow> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every row in one array (mind the memory for 50,000-row jobs). */
  async toArray(): Promise<ResultRow[]> {
    const rows: ResultRow[] = [];
    for await (const row of this) rows.push(row);
    return rows;
  }
}

function query(f: ResultsFilters): Record<string, string | number | boolean | null | undefined> {
  return { service: f.service, status: f.status, registered: f.registered, limit: f.limit };
}

async function body(params: JobCreateParams): Promise<{ json?: unknown; form?: FormData }> {
  if (!params || typeof params !== "object") throw new InvalidArgumentError("params", "Job parameters are required.");
  if (!("file" in params)) return { json: params };
  const p = params as CsvJobParams;
  if ("numbers" in params || "emails" in params) throw new InvalidArgumentError("file", "Send either `file` or `numbers`/`emails`, not both.");
  if (!Array.isArray(p.checks) || p.checks.some((c) => typeof c !== "string")) throw new InvalidArgumentError("checks", "`checks` must be an array of check codes.");
  const { blob, filename } = await fileToBlob(p.file);
  const form = new FormData();
  form.append("file", blob, p.filename ?? filename);
  form.append("checks", p.checks.join(","));
  if (p.max_cost !== undefined) form.append("max_cost", String(p.max_cost.amount));
  if (p.webhook_endpoint_id !== undefined) form.append("webhook_endpoint_id", p.webhook_endpoint_id);
  if (p.progress_events !== undefined) form.append("progress_events", String(p.progress_events));
  return { form };
}
