import { ConnectionError, InvalidArgumentError, TimeoutError } from "./errors";
import { iterateReader } from "./files";
import type { OpenResponse } from "./transport";

/** The minimum of a Node `Writable` the SDK uses (so its types need no @types/node). */
export interface NodeWritableLike {
  write(chunk: Uint8Array, callback?: (err?: Error | null) => void): boolean;
  end(callback?: () => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Where a download goes: a file path, a Node Writable (file, socket, process.stdout) or a web WritableStream. */
export type DownloadTarget = string | NodeWritableLike | WritableStream<Uint8Array>;

export interface DownloadResult {
  format: string;
  /** Bytes written. */
  bytes: number;
  contentType: string | null;
  /** The file name the API suggested (Content-Disposition), if any. */
  filename: string | null;
  requestId: string | null;
}

/**
 * Copies the streamed body to `to`, chunk by chunk with back-pressure: the file is
 * never held in memory. A gap longer than `idleTimeoutMs` between chunks aborts it.
 * A file path is written in place; if the copy fails the partial file is removed.
 */
export async function copyDownload(open: OpenResponse, to: DownloadTarget, opts: { format: string; idleTimeoutMs: number; end?: boolean; signal?: AbortSignal }): Promise<DownloadResult> {
  const res = open.response;
  const meta = { format: opts.format, contentType: res.headers.get("content-type"), filename: filenameOf(res.headers.get("content-disposition")), requestId: open.requestId };
  const chunks = guarded(open, opts.idleTimeoutMs, opts.signal);
  try {
    if (typeof to === "string") return { ...meta, bytes: await toPath(chunks, to) };
    if (typeof WritableStream !== "undefined" && to instanceof WritableStream) return { ...meta, bytes: await toWebStream(chunks, to) };
    if (to && typeof (to as NodeWritableLike).write === "function" && typeof (to as NodeWritableLike).once === "function") {
      return { ...meta, bytes: await toNodeWritable(chunks, to as NodeWritableLike, opts.end !== false) };
    }
    throw new InvalidArgumentError("to", "`to` must be a file path, a Node Writable or a WritableStream.");
  } finally {
    open.done();
  }
}

/** The body's chunks, with the idle timeout and the caller's signal applied, and failures as SDK errors. */
async function* guarded(open: OpenResponse, idleMs: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const body = open.response.body;
  if (!body) return;
  let idle = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idle = true;
      open.abort(new Error("idle timeout"));
    }, idleMs);
  };
  try {
    arm();
    for await (const chunk of iterateReader(body)) {
      arm();
      yield chunk;
    }
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (idle) throw new TimeoutError(`The download stalled for ${idleMs} ms.`, { attempts: open.attempts, retryable: true });
    throw new ConnectionError(open.scrub(`The download was cut off (${(err as Error)?.message ?? "no more data"}).`), { attempts: open.attempts, retryable: true });
  } finally {
    clearTimeout(timer);
  }
}

async function toWebStream(chunks: AsyncIterable<Uint8Array>, to: WritableStream<Uint8Array>): Promise<number> {
  const writer = to.getWriter();
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      await writer.ready;
      await writer.write(chunk);
      bytes += chunk.byteLength;
    }
    await writer.close();
    return bytes;
  } catch (err) {
    await writer.abort(err).catch(() => undefined);
    throw err;
  } finally {
    writer.releaseLock();
  }
}

async function toNodeWritable(chunks: AsyncIterable<Uint8Array>, to: NodeWritableLike, end: boolean): Promise<number> {
  let failed: unknown = null;
  const onError = (err: unknown) => {
    failed = err ?? new Error("write failed");
  };
  to.once("error", onError);
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      if (failed) throw failed;
      const more = to.write(chunk);
      bytes += chunk.byteLength;
      if (!more) await drained(to, () => failed);
    }
    if (failed) throw failed;
    if (end) await new Promise<void>((resolve, reject) => {
      const onFinishError = (err: unknown) => reject(err);
      to.once("error", onFinishError);
      to.end(() => {
        to.removeListener("error", onFinishError);
        resolve();
      });
    });
    return bytes;
  } finally {
    to.removeListener("error", onError);
  }
}

function drained(to: NodeWritableLike, failed: () => unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    if (failed()) return reject(failed());
    const done = () => {
      to.removeListener("drain", done);
      to.removeListener("error", fail);
      to.removeListener("close", done);
      resolve();
    };
    const fail = (err: unknown) => {
      to.removeListener("drain", done);
      to.removeListener("close", done);
      reject(err);
    };
    to.once("drain", done);
    to.once("close", done);
    to.once("error", fail);
  });
}

async function toPath(chunks: AsyncIterable<Uint8Array>, path: string): Promise<number> {
  let fs: typeof import("node:fs");
  try {
    fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ "node:fs");
  } catch {
    throw new InvalidArgumentError("to", "File paths need a runtime with node:fs (Node, Bun, Deno); pass a WritableStream instead.");
  }
  const file = fs.createWriteStream(path);
  await new Promise<void>((resolve, reject) => {
    file.once("open", () => resolve());
    file.once("error", (err) => reject(new InvalidArgumentError("to", `Cannot write ${path} (${(err as { code?: string }).code ?? err.message}).`)));
  });
  try {
    return await toNodeWritable(chunks, file as unknown as NodeWritableLike, true);
  } catch (err) {
    file.destroy();
    await fs.promises.rm(path, { force: true }).catch(() => undefined);
    throw err;
  }
}

/** `attachment; filename="job_x.csv"` → `job_x.csv`. */
function filenameOf(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ""));
    } catch {
      // fall through to the plain parameter
    }
  }
  const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(header);
  return plain ? (plain[2] ?? plain[1] ?? "").trim() || null : null;
}
