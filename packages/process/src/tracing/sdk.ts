import type { IncomingMessage } from "node:http";
import { context, defaultTextMapSetter, propagation, trace, type Context, type TextMapGetter, type TextMapPropagator } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { tracingState } from "./api";
import { SanitizingExporter } from "./sanitize";

/**
 * The SDK half of tracing, loaded only when tracing is on (see ./start). It must run
 * before `pg`, `ioredis` and `http` are first required, so their instrumentations
 * can hook them: each service's main.ts imports its `./tracing` file first.
 */
export type TracingOptions = {
  serviceName: string;
  /** Defaults to OTLP over HTTP/protobuf, configured by the standard OTEL_EXPORTER_OTLP_* variables. */
  exporter?: SpanExporter;
  /** `simple` exports each span as it ends (tests); `batch` (default) buffers, as production should. */
  processor?: "batch" | "simple";
  env?: NodeJS.ProcessEnv;
};

/** Paths of the metrics port, scraped every few seconds: never worth a trace. */
const UNTRACED_PATHS = new Set(["/metrics", "/livez", "/readyz"]);

/** OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG as the specification defines them; default parentbased_always_on. */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler {
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? "1");
  const arg = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
  switch ((env.OTEL_TRACES_SAMPLER ?? "").trim()) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(arg);
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(arg) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * The process-wide propagator reads W3C trace context (a caller's or a load
 * balancer's `traceparent` continues its trace) but writes none: the http
 * instrumentation would otherwise send our trace ids to vendors and to customers'
 * webhook endpoints. Queue messages get theirs through `state.inject` instead.
 */
class ExtractOnlyPropagator implements TextMapPropagator {
  constructor(private readonly w3c: W3CTraceContextPropagator) {}
  inject(): void {}
  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    return this.w3c.extract(ctx, carrier, getter);
  }
  fields(): string[] {
    return [];
  }
}

export function startTracing(options: TracingOptions): void {
  const state = tracingState();
  if (state.enabled) return;
  const env = options.env ?? process.env;
  const exporter = new SanitizingExporter(options.exporter ?? new OTLPTraceExporter());
  const processor = options.processor === "simple" ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter });
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || options.serviceName })),
    sampler: samplerFromEnv(env),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // Trace context only: baggage could carry anything a caller sends, so it is neither read nor passed on.
  const w3c = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(new ExtractOnlyPropagator(w3c));
  state.inject = (carrier) => w3c.inject(context.active(), carrier, defaultTextMapSetter);
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => {
          const server = (req.socket as { server?: import("node:net").Server }).server;
          if (server && state.untracedServers.has(server)) return true;
          return UNTRACED_PATHS.has((req.url ?? "").split("?")[0] ?? "");
        },
        // Incoming headers (user agents, forwarded client addresses) are not recorded.
        headersToSpanAttributes: {},
      }),
      // Statement text only: parameters (identifiers) are never captured (enhancedDatabaseReporting off),
      // and queries outside any traced work (sweeps, the key-cache listener) make no spans.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true, addSqlCommenterCommentToQueries: false }),
      // The command name only: keys and arguments hold ids and hashes of identifiers.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command: string) => command }),
    ],
  });
  state.enabled = true;
  state.shutdown = async () => {
    state.enabled = false;
    await provider.shutdown().catch(() => undefined);
  };
}
