import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "@svc/contract";
import { newId } from "@svc/domain";

/**
 * Requests Node refuses before Express sees them (headers too large or too many,
 * malformed HTTP, a request not received within `requestTimeout`) still get the
 * standard error object, as `400 invalid_request`, and the connection is closed.
 */
export function answerClientErrors(server: Server, docBaseUrl: () => string): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const message =
      err.code === "HPE_HEADER_OVERFLOW" ? "The request headers are too large." : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "The request was not received in time." : "The request is not valid HTTP.";
    const requestId = newId("request");
    const body = JSON.stringify(new ApiError("invalid_request", { message }).toBody(requestId, docBaseUrl()));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
