import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { SanitizingExporter } from "../../packages/process/src/tracing/sanitize";

/**
 * What the instrumentations record, and what the tracing module lets out. The
 * attributes below are the ones the http, pg and ioredis instrumentations write (old
 * and stable semantic conventions); only the allow-listed ones survive, scrubbed.
 */
const inner = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: new SanitizingExporter(inner) })] });
const tracer = provider.getTracer("test");

afterEach(() => inner.reset());

const KEY = "svc_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
const PHONE = "+14155550123";
const EMAIL = "jane.doe@example.org";

describe("the span sanitizer", () => {
  it("keeps the route template and status of a server span, drops its path, query, client and peer", () => {
    const span = tracer.startSpan("GET /v1/lookups/{id}", {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": "GET",
        "http.method": "GET",
        "http.route": "/v1/lookups/{id}",
        "url.full": `http://api.example.com/v1/lookups/lkp_123?number=${encodeURIComponent(PHONE)}`,
        "url.path": "/v1/lookups/lkp_123",
        "url.query": `email=${EMAIL}`,
        "http.url": `http://api.example.com/v1/lookups/lkp_123?email=${EMAIL}`,
        "http.target": "/v1/lookups/lkp_123",
        "http.host": "api.example.com",
        "client.address": "203.0.113.9",
        "net.peer.ip": "203.0.113.9",
        "network.peer.address": "203.0.113.9",
        "server.address": "api.example.com",
        "user_agent.original": "curl/8",
        "http.user_agent": "curl/8",
        "http.response.status_code": 200,
      },
    });
    span.end();
    const [out] = inner.getFinishedSpans();
    expect(out?.attributes).toEqual({ "http.request.method": "GET", "http.method": "GET", "http.route": "/v1/lookups/{id}", "http.response.status_code": 200 });
    expect(out?.name).toBe("GET /v1/lookups/{id}");
  });

  it("keeps SQL text and drops connection strings, users and parameter values; scrubs literals that look personal", () => {
    const span = tracer.startSpan("pg.query:SELECT svc", {
      kind: SpanKind.CLIENT,
      attributes: {
        "db.system.name": "postgresql",
        "db.namespace": "svc",
        "db.query.text": `SELECT * FROM lookups WHERE id = $1 OR note = '${EMAIL}' OR e164 = '${PHONE}'`,
        "db.statement": `SELECT 1 -- ${KEY}`,
        "db.connection_string": "postgresql://app:hunter2@db.internal:5432/svc",
        "db.user": "app",
        "db.postgresql.values": [PHONE, EMAIL],
        "net.peer.name": "db.internal",
        "server.port": 5432,
      },
    });
    span.end();
    const attrs = inner.getFinishedSpans()[0]?.attributes ?? {};
    expect(Object.keys(attrs).sort()).toEqual(["db.namespace", "db.query.text", "db.statement", "db.system.name"]);
    const text = JSON.stringify(attrs);
    for (const secret of [EMAIL, PHONE, "4155550123", KEY, "hunter2", "db.internal"]) expect(text).not.toContain(secret);
    expect(attrs["db.query.text"]).toContain("SELECT * FROM lookups WHERE id = $1");
  });

  it("scrubs span names, status messages and exception events; keeps our own svc.* attributes", () => {
    const span = tracer.startSpan(`lookup ${EMAIL}`, { attributes: { "svc.job.name": "lookup.run", "svc.note": `for ${PHONE}` } });
    span.recordException(new Error(`duplicate key value (email)=(${EMAIL}) with ${KEY}`));
    span.setStatus({ code: SpanStatusCode.ERROR, message: `failed for ${PHONE}` });
    span.end();
    const out = inner.getFinishedSpans()[0];
    const text = JSON.stringify({ name: out?.name, attributes: out?.attributes, events: out?.events, status: out?.status });
    for (const secret of [EMAIL, PHONE, "4155550123", KEY]) expect(text).not.toContain(secret);
    expect(out?.attributes["svc.job.name"]).toBe("lookup.run");
    expect(out?.events[0]?.attributes?.["exception.type"]).toBe("Error");
    expect(String(out?.events[0]?.attributes?.["exception.message"])).toContain("duplicate key value");
  });
});
