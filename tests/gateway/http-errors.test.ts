import { createServer, type Server } from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { createApp, docBaseUrl } from "../../services/gateway/src/app";
import { answerClientErrors } from "../../services/gateway/src/http/client-errors";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

type RawResponse = { status: number; headers: Record<string, string>; body: string; raw: string };

/**
 * Sends bytes over a real TCP connection and reads until the server closes it (or
 * `until` matches what arrived), then parses the last response in it.
 */
function raw(port: number, chunks: string[], options: { until?: RegExp; gapMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let received = "";
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      const responses = received.split(/(?=HTTP\/1\.1 \d{3} )/).filter((r) => !r.startsWith("HTTP/1.1 100 "));
      const last = responses[responses.length - 1] ?? "";
      const [head = "", body = ""] = last.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body, raw: received });
    };
    socket.on("data", (d) => {
      received += d.toString("latin1");
      if (options.until?.test(received)) finish();
    });
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", (err) => (received ? finish() : reject(err)));
    socket.on("connect", async () => {
      for (const chunk of chunks) {
        socket.write(chunk);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
    });
  });
}

/** The standard error object with the request id both in the body and in X-Request-Id. */
function expectErrorObject(res: RawResponse, status: number, code: string, retryable: boolean) {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.headers["x-request-id"]).toMatch(/^req_/);
  const body = JSON.parse(res.body);
  expect(body.error).toMatchObject({ code, status, retryable, param: null, request_id: res.headers["x-request-id"] });
  expect(body.error.doc_url).toBe(`${gw.url}/docs/errors#${code}`);
  expect(typeof body.error.message).toBe("string");
  return body.error as { message: string; suggestion?: string };
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;

describe("responses Node would write by itself carry the error object and X-Request-Id", () => {
  it("Expect other than 100-continue: 417 invalid_request", async () => {
    const res = await raw(portOf(gw.server), [
      "POST /v1/lookup HTTP/1.1\r\nHost: api.test\r\nExpect: 200-ok-please\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    ]);
    const error = expectErrorObject(res, 417, "invalid_request", false);
    expect(error.message).not.toContain("200-ok-please");
  });

  it("Expect: 100-continue still gets 100 Continue and the request's own answer", async () => {
    const res = await raw(portOf(gw.server), ["GET /v1/health HTTP/1.1\r\nHost: api.test\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"]);
    expect(res.raw.startsWith("HTTP/1.1 100 Continue")).toBe(true);
    expect(res.status).toBe(200);
  });

  it("HTTP/1.1 without Host: 400 invalid_request", async () => {
    const res = await raw(portOf(gw.server), ["GET /v1/health HTTP/1.1\r\nConnection: close\r\n\r\n"]);
    expectErrorObject(res, 400, "invalid_request", false);
    // HTTP/1.0 has no Host requirement.
    const old = await raw(portOf(gw.server), ["GET /v1/health HTTP/1.0\r\n\r\n"]);
    expect(old.status).toBe(200);
  });

  it("headers too large: 400 invalid_request", async () => {
    const res = await raw(portOf(gw.server), [`GET /v1/health HTTP/1.1\r\nHost: api.test\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`]);
    const error = expectErrorObject(res, 400, "invalid_request", false);
    expect(error.message).toMatch(/headers are too large/);
  });

  it("chunk extensions too large: 400 invalid_request", async () => {
    const res = await raw(portOf(gw.server), [
      `POST /v1/lookup HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;ext=${"x".repeat(20_000)}\r\n{}\r\n0\r\n\r\n`,
    ]);
    expectErrorObject(res, 400, "invalid_request", false);
  });

  it("not HTTP: 400 invalid_request, the input not echoed", async () => {
    const res = await raw(portOf(gw.server), ["HELLO +12025550123 there\r\n\r\n"]);
    const error = expectErrorObject(res, 400, "invalid_request", false);
    expect(res.body).not.toContain("12025550123");
    expect(error.message).toBe("The request is not valid HTTP.");
  });

  describe("timeouts (a server with short limits, otherwise the gateway's own application)", () => {
    let server: Server;
    beforeAll(async () => {
      server = createServer({ connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 600 });
      server.on("request", createApp(gw.deps));
      answerClientErrors(server, () => docBaseUrl(gw.deps));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it("a body not received within requestTimeout: 408, retryable, with Retry-After", async () => {
      const res = await raw(portOf(server), ["POST /v1/lookup HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"numbers\":"]);
      const error = expectErrorObject(res, 408, "temporarily_unavailable", true);
      expect(error.suggestion).toMatch(/again/);
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.headers.connection).toBe("close");
    });

    it("headers not received within headersTimeout: 408", async () => {
      const res = await raw(portOf(server), ["GET /v1/health HTTP/1.1\r\nHost: api.test\r\n"]);
      expectErrorObject(res, 408, "temporarily_unavailable", true);
    });
  });
});
