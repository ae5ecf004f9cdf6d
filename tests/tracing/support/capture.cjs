// Preloaded into real service processes by the tracing tests (NODE_OPTIONS=--require):
// starts the services' own tracing module (packages/process/dist/tracing/sdk.js, the same
// code OTEL_EXPORTER_OTLP_ENDPOINT starts) with an in-memory exporter instead of OTLP.
// Every span, as exported (that is, after the module's sanitizer), is also appended to
// $TRACE_CAPTURE_DIR/<service>.jsonl for the test to read. The service's own
// `import "./tracing"` then finds tracing started and does nothing.
const { isMainThread } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");

if (isMainThread && process.env.TRACE_CAPTURE_DIR) {
  const root = path.resolve(__dirname, "..", "..", "..");
  const { startTracing } = require(path.join(root, "packages", "process", "dist", "tracing", "sdk.js"));
  const { InMemorySpanExporter } = require(require.resolve("@opentelemetry/sdk-trace", { paths: [path.join(root, "packages", "process")] }));
  // services/<name>/dist/main.js
  const service = path.basename(path.dirname(path.dirname(process.argv[1] ?? "unknown")));
  const file = path.join(process.env.TRACE_CAPTURE_DIR, `${service}.jsonl`);
  const hex = (ctx) => ctx && { traceId: ctx.traceId, spanId: ctx.spanId };
  class CaptureExporter extends InMemorySpanExporter {
    export(spans, done) {
      const lines = spans.map((s) =>
        JSON.stringify({
          service,
          name: s.name,
          kind: s.kind,
          ...hex(s.spanContext()),
          parentSpanId: s.parentSpanContext?.spanId,
          attributes: s.attributes,
          events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
          status: s.status,
        }),
      );
      fs.appendFileSync(file, lines.map((l) => `${l}\n`).join(""));
      super.export(spans, done);
    }
  }
  startTracing({ serviceName: service, exporter: new CaptureExporter(), processor: "simple" });
}
