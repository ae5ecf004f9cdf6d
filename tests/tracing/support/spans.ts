import { existsSync, mkdtempSync, readFileSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** One exported span as tests/tracing/support/capture.cjs writes it. */
export type CapturedSpan = {
  service: string;
  name: string;
  /** SpanKind: 0 internal, 1 server, 2 client, 3 producer, 4 consumer. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes?: Record<string, unknown> }>;
  status: { code: number; message?: string };
};

export const KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

/** A fresh capture directory and the environment that makes a service process write its spans there. */
export function captureEnv(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "svc-trace-"));
  return { dir, env: { TRACE_CAPTURE_DIR: dir, NODE_OPTIONS: `--require ${path.join(__dirname, "capture.cjs")}` } };
}

export function readSpans(dir: string): CapturedSpan[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) =>
      readFileSync(path.join(dir, f), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as CapturedSpan),
    );
}

/** The raw text of every captured span (for "never contains" checks). */
export function rawSpans(dir: string): string {
  if (!existsSync(dir)) return "";
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => readFileSync(path.join(dir, f), "utf8"))
    .join("\n");
}
