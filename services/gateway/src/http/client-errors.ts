import type { Server } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "@svc/contract";
import { newId } from "@svc/domain";

/**
 * Requests Node refuses before Express sees them (headers too large or too many,
 * malformed HTTP) still get the standard error object, as `400 invalid_request`,
 * and the connection is closed. A request not received within `requestTimeout`
 * keeps HTTP's 408, which clients retry.
 */
export function answerClientErrors(server: Server, docBaseUrl: () => string): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // Nothing can be written into a response already under way (a pipelined request
    // during a download), nor to a socket gone.
    if (err.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      // Not the client's mistake to correct but a retry to make: HTTP's own 408, as Node answers it.
      socket.end("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n");
      return;
    }
    const message = err.code === "HPE_HEADER_OVERFLOW" ? "The request headers are too large." : "The request is not valid HTTP.";
    const requestId = newId("request");
    const body = JSON.stringify(new ApiError("invalid_request", { message }).toBody(requestId, docBaseUrl()));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
