import { spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import request from "supertest";
import { createTestEnv, type TestEnv } from "../support/env";
import { startService } from "../support/fleet";
import { eventually } from "../support/live";

/**
 * The production switch: OTEL_EXPORTER_OTLP_ENDPOINT. Unset, a service's tracing
 * entry loads no SDK and hooks nothing; set, the gateway exports OTLP/protobuf to
 * it (here a receiver on loopback), and the bytes on the wire hold the request's
 * trace id but none of the request's identifiers or its key.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"];

/** Loads a service's tracing entry, then the modules it would instrument, and says what got loaded and hooked. */
function probe(service: string, env: Record<string, string>): { sdk: string[]; pgWrapped: boolean; httpWrapped: boolean; redisWrapped: boolean } {
  const script = `
    require(${JSON.stringify(path.join(ROOT, "services", service, "dist", "tracing.js"))});
    const pg = require("pg"); const http = require("http"); const { Redis } = require("ioredis");
    const sdk = Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-|instrumentation|exporter-|context-)/.test(k));
    process.stdout.write(JSON.stringify({ sdk, pgWrapped: Boolean(pg.Client.prototype.query.__wrapped), httpWrapped: Boolean(http.request.__wrapped), redisWrapped: Boolean(Redis.prototype.sendCommand.__wrapped) }));
  `;
  const res = spawnSync(process.execPath, ["-e", script], { cwd: path.join(ROOT, "services", service), env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" });
  expect(res.stderr).toBe("");
  return JSON.parse(res.stdout);
}

describe("tracing off", () => {
  it.each(SERVICES)("%s: without OTEL_EXPORTER_OTLP_ENDPOINT no SDK is loaded and nothing is hooked", (service) => {
    expect(probe(service, {})).toEqual({ sdk: [], pgWrapped: false, httpWrapped: false, redisWrapped: false });
    // Explicitly disabled wins over an endpoint.
    expect(probe(service, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" }).sdk).toEqual([]);
  });

  it("with the endpoint set, the same entry loads the SDK and hooks pg, ioredis and http before they are used", () => {
    const on = probe("check-worker", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(on.sdk.length).toBeGreaterThan(0);
    expect(on).toMatchObject({ pgWrapped: true, httpWrapped: true, redisWrapped: true });
  });
});

describe("tracing exported over OTLP", () => {
  let env: TestEnv;
  let receiver: Server;
  const received: Array<{ path: string; type: string; body: Buffer }> = [];

  beforeAll(async () => {
    env = await createTestEnv();
    receiver = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ path: req.url ?? "", type: String(req.headers["content-type"]), body: Buffer.concat(chunks) });
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it("sends the gateway's spans as OTLP/protobuf, with the request's trace id and without its identifiers or key", async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const gateway = await startService("gateway", env, { PORT: "0", LOG_LEVEL: "info", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    const key = "svc_test_publicSandboxDemoKey2026v1AbCd4QUfHJ";
    const res = await request(gateway.url)
      .post("/v1/lookup")
      .set("Authorization", `Bearer ${key}`)
      .send({ numbers: ["+12025550101"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    expect(res.status).toBe(200);
    const line = await eventually(async () => gateway.output().split("\n").find((l) => l.includes(`"reqId":"${res.headers["x-request-id"]}"`) && l.includes('"msg":"request"')), 5_000, "access-log line");
    const traceId = /"trace_id":"([0-9a-f]{32})"/.exec(line)?.[1] as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // SIGTERM: the shutdown exports what the batch processor still holds.
    expect(await gateway.stop()).toBe(0);

    const traces = received.filter((r) => r.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    for (const r of traces) expect(r.type).toBe("application/x-protobuf");
    const wire = Buffer.concat(traces.map((r) => r.body));
    expect(wire.includes(Buffer.from(traceId, "hex"))).toBe(true);
    expect(wire.includes(Buffer.from("POST /v1/lookup"))).toBe(true);
    expect(wire.includes(Buffer.from("gateway"))).toBe(true);
    for (const secret of ["2025550101", "deliverable@example.com", "example.com", key, key.slice(-10)]) expect(wire.includes(Buffer.from(secret))).toBe(false);
  }, 30_000);
});
