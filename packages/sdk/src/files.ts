import { LIMITS } from "./contract";
import { InvalidArgumentError } from "./errors";

/**
 * A CSV upload: a file path (Node, Bun, Deno), a Blob or File, bytes, a web
 * ReadableStream, or any async iterable of chunks (a Node Readable is one).
 */
export type FileInput = string | Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

/**
 * Streams are read into memory up to this many bytes, so that a retry can send
 * the same upload again under the same Idempotency-Key. The API itself accepts
 * at most 4 MB (LIMITS.jobBodyBytes); this ceiling only stops runaway input.
 */
export const MAX_BUFFERED_UPLOAD_BYTES = 4 * LIMITS.jobBodyBytes;

/** The upload as a Blob that can be sent more than once. File paths are read lazily where the runtime can. */
export async function fileToBlob(file: FileInput): Promise<{ blob: Blob; filename: string }> {
  if (typeof file === "string") return fromPath(file);
  if (typeof Blob !== "undefined" && file instanceof Blob) return { blob: file, filename: (file as File).name || "upload.csv" };
  if (file instanceof Uint8Array || file instanceof ArrayBuffer) return { blob: new Blob([file as BlobPart], { type: "text/csv" }), filename: "upload.csv" };
  if (isReadableStream(file)) return { blob: await collect(iterateReader(file)), filename: "upload.csv" };
  if (file && typeof (file as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
    const path = (file as { path?: unknown }).path; // fs.ReadStream knows its file name
    const filename = typeof path === "string" ? basename(path) : "upload.csv";
    return { blob: await collect(file as AsyncIterable<Uint8Array | string>), filename };
  }
  throw new InvalidArgumentError("file", "`file` must be a path, a Blob, bytes, a ReadableStream or an async iterable of chunks.");
}

async function fromPath(path: string): Promise<{ blob: Blob; filename: string }> {
  // Only here does the SDK touch the file system, so the core stays free of node: imports.
  let fs: typeof import("node:fs");
  try {
    fs = await import(/* webpackIgnore: true */ /* @vite-ignore */ "node:fs");
  } catch {
    throw new InvalidArgumentError("file", "File paths need a runtime with node:fs (Node, Bun, Deno); pass a Blob or a stream instead.");
  }
  try {
    if (typeof fs.openAsBlob === "function") {
      // A file-backed Blob: read when sent (again on a retry), never held in memory.
      return { blob: await fs.openAsBlob(path, { type: "text/csv" }), filename: basename(path) };
    }
    const bytes = await fs.promises.readFile(path);
    return { blob: new Blob([bytes as BlobPart], { type: "text/csv" }), filename: basename(path) };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new InvalidArgumentError("file", `Cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}.`);
  }
}

async function collect(source: AsyncIterable<Uint8Array | string>): Promise<Blob> {
  const parts: BlobPart[] = [];
  let size = 0;
  const encoder = new TextEncoder();
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk;
    size += bytes.byteLength;
    if (size > MAX_BUFFERED_UPLOAD_BYTES) {
      throw new InvalidArgumentError("file", `The upload is larger than ${MAX_BUFFERED_UPLOAD_BYTES} bytes; the API accepts at most ${LIMITS.jobBodyBytes} bytes per request.`);
    }
    parts.push(bytes as BlobPart);
  }
  return new Blob(parts, { type: "text/csv" });
}

export function isReadableStream(x: unknown): x is ReadableStream<Uint8Array> {
  return typeof ReadableStream !== "undefined" && x instanceof ReadableStream;
}

/** Reads a web stream chunk by chunk (ReadableStream is not async-iterable in every browser). */
export async function* iterateReader(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function basename(path: string): string {
  return path.split(/[\\/]/).pop() || "upload.csv";
}
