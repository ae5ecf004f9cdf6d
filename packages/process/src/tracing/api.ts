import type { Server } from "node:net";
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";

/**
 * The cheap half of tracing: what services, queues and the logger call. It needs only
 * `@opentelemetry/api`, whose calls are no-ops until an SDK registers itself, and it
 * checks one flag first, so with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT) every
 * helper returns at once: no span, no carrier, no log fields. The SDK half
 * (`./sdk`, loaded only when tracing is on) sets the flag.
 */
type TracingState = {
  enabled: boolean;
  /** Exports what is buffered and stops the SDK (set by the SDK; the shutdown manager calls it last). */
  shutdown: () => Promise<void>;
  /** Writes the active context's `traceparent`/`tracestate` into a carrier (set by the SDK). */
  inject: (carrier: Record<string, string>) => void;
  /** Servers whose requests are never traced (metrics and probes, the operator dashboard). */
  untracedServers: WeakSet<Server>;
};

const KEY = Symbol.for("svc.tracing.state");
type WithState = typeof globalThis & { [KEY]?: TracingState };

/** One state per process, shared by every copy of this module (built code and tests alike). */
export function tracingState(): TracingState {
  const g = globalThis as WithState;
  return (g[KEY] ??= { enabled: false, shutdown: async () => undefined, inject: () => undefined, untracedServers: new WeakSet() });
}

export function tracingEnabled(): boolean {
  return tracingState().enabled;
}

const TRACER = "svc";
const tracer = () => trace.getTracer(TRACER);

/** W3C trace context as it travels in a queue message: the `traceparent` and `tracestate` headers, nothing else. */
export type TraceCarrier = { traceparent: string; tracestate?: string };

/** The active span's context as a carrier, or undefined when tracing is off or nothing is being traced. */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const state = tracingState();
  if (!state.enabled) return undefined;
  const carrier: Record<string, string> = {};
  state.inject(carrier);
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

function contextFrom(carrier: TraceCarrier | undefined): Context {
  if (!carrier) return context.active();
  return propagation.extract(context.active(), carrier);
}

export type SpanOptions = { kind?: "internal" | "client" | "server" | "producer" | "consumer"; attributes?: Attributes; parent?: TraceCarrier };

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER, producer: SpanKind.PRODUCER, consumer: SpanKind.CONSUMER } as const;

/**
 * Runs `fn` inside a new span (a child of `options.parent` when given — a message's
 * carrier — else of the active span) and ends it when `fn` settles; a thrown error
 * marks the span failed and is rethrown. With tracing off it only calls `fn`.
 * Attributes must never hold an identifier, address or key (the exporter drops
 * unknown keys anyway; see ./sanitize).
 */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!tracingState().enabled) return fn(undefined);
  const parent = contextFrom(options.parent);
  const span = tracer().startSpan(name, { kind: KINDS[options.kind ?? "internal"], attributes: options.attributes }, parent);
  return context.with(trace.setSpan(parent, span), async () => {
    try {
      return await fn(span);
    } catch (err) {
      markFailed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Records an error on a span: its type as the status, the exception event (scrubbed again on export). */
export function markFailed(span: Span | undefined, err: unknown): void {
  if (!span) return;
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : "error" });
}

/** Names the active HTTP server span by its route template (`POST /v1/lookups/{id}`), never by its path. */
export function nameServerSpan(method: string, routeTemplate: string): void {
  if (!tracingState().enabled) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${routeTemplate}`);
  span.setAttribute("http.route", routeTemplate);
}

/** Requests to this server are never traced (metrics and probes scraped every few seconds, the operator dashboard). */
export function excludeServerFromTracing(server: Server): void {
  tracingState().untracedServers.add(server);
}

/** `trace_id`/`span_id` of the active span for log lines (pino mixin); empty when nothing is traced. */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  if (!tracingState().enabled) return {};
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Exports what is buffered and stops tracing; a no-op when tracing is off. Bounded by the SDK's own timeouts. */
export function shutdownTracing(): Promise<void> {
  return tracingState().shutdown();
}
