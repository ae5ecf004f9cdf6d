export { createLogger, type Logger } from "./logger";
export { scrubText, scrubValue } from "./scrub";
export { ShutdownManager } from "./shutdown";
export {
  currentTraceCarrier,
  excludeServerFromTracing,
  markFailed,
  nameServerSpan,
  shutdownTracing,
  traceLogFields,
  tracingEnabled,
  withSpan,
  type SpanOptions,
  type TraceCarrier,
} from "./tracing/api";
