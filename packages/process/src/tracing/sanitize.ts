import type { Attributes, AttributeValue } from "@opentelemetry/api";
import type { ExportResult } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { scrubText } from "../scrub";

/**
 * What may leave the process in a span. Instrumentations record far more than we
 * want exported — full URLs and paths (ids, customers' webhook URLs and their query
 * strings), client and server addresses, user agents, connection strings, Redis
 * arguments — so every span passes through here on its way to any exporter: only
 * the attributes below survive, and every string that does is scrubbed like a log
 * line (API keys, webhook secrets, e-mail addresses, phone-number-shaped digits).
 * Route templates stand in for paths; nothing names a peer.
 */
const KEEP = new Set([
  // HTTP, both the old and the stable semantic conventions
  "http.method",
  "http.request.method",
  "http.status_code",
  "http.response.status_code",
  "http.route",
  "http.flavor",
  "http.scheme",
  "url.scheme",
  "network.protocol.version",
  "error.type",
  // Postgres and Redis: statement text only (SQL with $n placeholders; Redis command names, see ./sdk)
  "db.system",
  "db.system.name",
  "db.name",
  "db.namespace",
  "db.operation",
  "db.operation.name",
  "db.statement",
  "db.query.text",
  "db.collection.name",
  // queues
  "messaging.system",
  "messaging.operation",
  "messaging.operation.type",
  "messaging.operation.name",
  "messaging.destination.name",
  "messaging.batch.message_count",
  // exception events
  "exception.type",
  "exception.message",
  "exception.stacktrace",
  "exception.escaped",
]);

/** Our own attributes (`svc.job.name`, `svc.smtp.stage`…), written knowing the rule above. */
const OWN_PREFIX = "svc.";
const MAX_TEXT = 2_048;

export function keepsAttribute(name: string): boolean {
  return KEEP.has(name) || name.startsWith(OWN_PREFIX);
}

function cleanValue(value: AttributeValue): AttributeValue {
  if (typeof value === "string") return scrubText(value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === "string" ? scrubText(v) : v)) as AttributeValue;
  return value;
}

export function sanitizeAttributes(attributes: Attributes | undefined): Attributes {
  const out: Attributes = {};
  if (!attributes) return out;
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && keepsAttribute(name)) out[name] = cleanValue(value);
  }
  return out;
}

/** A copy of the span holding only what may be exported. */
export function sanitizeSpan(span: ReadableSpan): ReadableSpan {
  const context = span.spanContext();
  const attributes = sanitizeAttributes(span.attributes);
  return {
    name: scrubText(span.name),
    kind: span.kind,
    spanContext: () => context,
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status.message === undefined ? span.status : { ...span.status, message: scrubText(span.status.message) },
    attributes,
    links: span.links.map((link) => ({ ...link, attributes: sanitizeAttributes(link.attributes) })),
    events: span.events.map((event) => ({ ...event, name: scrubText(event.name), attributes: sanitizeAttributes(event.attributes) })),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Wraps any exporter (OTLP in production, in-memory in tests) so it only ever sees sanitized spans. */
export class SanitizingExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.inner.export(spans.map(sanitizeSpan), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
