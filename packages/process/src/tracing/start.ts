/**
 * `@svc/process/tracing`: the first import of every service's main.ts (through its
 * `src/tracing.ts`), so the instrumentations are in place before `pg`, `ioredis` and
 * `http` are loaded. Tracing is on only when an OTLP endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and not
 * disabled (OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none). Off, this file loads
 * nothing: no SDK, no instrumentation hooks; the helpers in ./api stay no-ops.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return false;
  if ((env.OTEL_TRACES_EXPORTER ?? "").trim().toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export function startTracingFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!tracingConfigured(env)) return false;
  // Required lazily, so that with tracing off the SDK is never loaded.
  const sdk = require("./sdk") as typeof import("./sdk");
  sdk.startTracing({ serviceName, env });
  return true;
}
