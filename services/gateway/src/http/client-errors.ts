import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "@svc/contract";
import { newId } from "@svc/domain";

/**
 * The error object for a refusal Node makes before the application sees the
 * request. `status` is the HTTP status sent: where HTTP defines its own status for
 * the situation (408, 417) that status is kept, so proxies and HTTP clients treat
 * it as HTTP says, and the body carries the nearest code from the error table.
 */
function errorResponse(error: ApiError, status: number, docBaseUrl: string, extraHeaders: Record<string, string> = {}) {
  const requestId = newId("request");
  const { error: body } = error.toBody(requestId, docBaseUrl);
  const json = JSON.stringify({ error: { ...body, status } });
  const headers: Record<string, string> = {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(json)),
    "X-Request-Id": requestId,
    "Cache-Control": "no-store",
    Connection: "close",
    ...extraHeaders,
  };
  return { json, headers };
}

const REASONS: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 417: "Expectation Failed" };

/** Writes a whole response straight to a socket the HTTP parser gave up on, and closes it. */
function endSocket(socket: Duplex, error: ApiError, status: number, docBaseUrl: string, extraHeaders?: Record<string, string>): void {
  const { json, headers } = errorResponse(error, status, docBaseUrl, extraHeaders);
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  socket.end(`HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}\r\n${head}\r\n${json}`);
}

function endResponse(res: ServerResponse, error: ApiError, status: number, docBaseUrl: string): void {
  const { json, headers } = errorResponse(error, status, docBaseUrl);
  res.writeHead(status, headers);
  res.end(json);
}

/**
 * A request Node refuses by itself while reading it, as the error object:
 * - not received within `requestTimeout` (or its headers within `headersTimeout`):
 *   HTTP's `408`, code `temporarily_unavailable`, retryable. The request was never
 *   acted on (its body was incomplete), so repeating it is safe and nothing was
 *   charged; see docs/api-decisions.md.
 * - headers too large, chunk extensions too large, anything that is not valid
 *   HTTP/1.x: `400 invalid_request` (Node would send 431, 413 or 400 with no body;
 *   400 is what v1 has always answered).
 * The connection is closed afterwards.
 */
function onClientError(docBaseUrl: () => string) {
  return (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // Nothing can be written into a response already under way (a pipelined request
    // during a download), nor to a socket gone.
    if (err.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      const timeout = new ApiError("temporarily_unavailable", {
        message: "The request was not received in full in time.",
        suggestion: "Send the request again, on a new connection; nothing was done or charged.",
      });
      endSocket(socket, timeout, 408, docBaseUrl(), { "Retry-After": "1" });
      return;
    }
    const message =
      err.code === "HPE_HEADER_OVERFLOW"
        ? "The request headers are too large."
        : err.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
          ? "The request's chunk extensions are too large."
          : "The request is not valid HTTP.";
    endSocket(socket, new ApiError("invalid_request", { message }), 400, docBaseUrl());
  };
}

/** HTTP/1.1 requires Host (RFC 9112 3.2); Node's own refusal of a request without one has no body. */
function lacksHost(req: IncomingMessage): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined;
}

/**
 * Gives every response Node would otherwise write by itself the standard error
 * object and an `X-Request-Id`:
 * - `clientError` (timeouts, oversized or malformed requests), see onClientError;
 * - `Expect:` other than `100-continue`: HTTP's `417` with `invalid_request`
 *   (Node's default is a bare 417);
 * - HTTP/1.1 without `Host`: `400 invalid_request` (Node's default is a bare 400).
 *   Node's check is switched off and made here instead, before any `request`
 *   listener (the application) sees the request.
 * Node's other self-made answer, 503 past `maxRequestsPerSocket`, cannot happen:
 * the gateway never sets that limit.
 */
export function answerClientErrors(server: Server, docBaseUrl: () => string): void {
  server.on("clientError", onClientError(docBaseUrl));
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const error = new ApiError("invalid_request", {
      message: "The Expect header asks for something this API does not support.",
      suggestion: "Send no Expect header, or Expect: 100-continue.",
    });
    endResponse(res, error, 417, docBaseUrl());
  });

  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  const emit = server.emit;
  server.emit = function emitUnlessHostMissing(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "request" || event === "checkExpectation") {
      const [req, res] = args as [IncomingMessage, ServerResponse];
      if (lacksHost(req)) {
        endResponse(res, new ApiError("invalid_request", { message: "The request has no Host header." }), 400, docBaseUrl());
        return true;
      }
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as Server["emit"];
}
