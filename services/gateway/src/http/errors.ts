import type { NextFunction, Request, Response } from "express";
import { ApiError } from "@svc/contract";

/** Body-parser failures, mapped to our codes without echoing anything from the body. */
function fromParserError(err: { type?: string; status?: number }): ApiError | null {
  switch (err.type) {
    case "entity.too.large":
      return new ApiError("payload_too_large");
    case "entity.parse.failed":
      return new ApiError("invalid_request", { message: "The request body is not valid JSON.", suggestion: "Send a JSON object with Content-Type: application/json." });
    case "encoding.unsupported":
    case "charset.unsupported":
      return new ApiError("invalid_request", { message: "The request body must be UTF-8 encoded JSON." });
    case "request.size.invalid":
    case "request.aborted":
      return new ApiError("invalid_request", { message: "The request body was incomplete." });
    default:
      return null;
  }
}

/**
 * Other client errors raised by Express and its parsers (a path parameter that is
 * not valid percent-encoding, a body that fails to decompress): they carry a 4xx
 * `status`. Their messages quote the input, so only the status is used.
 */
function fromClientError(err: { status?: unknown; statusCode?: unknown }): ApiError | null {
  const status = Number(err.status ?? err.statusCode);
  if (!Number.isInteger(status) || status < 400 || status > 499) return null;
  if (status === 413) return new ApiError("payload_too_large");
  if (err instanceof URIError) return new ApiError("invalid_request", { message: "The request path is not valid percent-encoding." });
  return new ApiError("invalid_request", { message: "The request could not be read." });
}

export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (!err || typeof err !== "object") return null;
  return ("type" in err ? fromParserError(err as { type?: string }) : null) ?? fromClientError(err);
}

export function sendApiError(req: Request, res: Response, err: ApiError, docBaseUrl: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  if (err.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(Math.max(0, Math.ceil(err.retryAfterSeconds))));
  res.status(err.status).json(err.toBody(req.id, docBaseUrl));
}

/**
 * Last middleware. Known errors become their error object; anything else is a 500
 * that says nothing internal — the details go to the log under the request id.
 */
export function errorHandler(docBaseUrl: string) {
  // Express recognises error handlers by arity, so `next` must stay in the signature.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = toApiError(err);
    if (known) {
      sendApiError(req, res, known, docBaseUrl);
      return;
    }
    req.log.error({ err }, "unhandled error");
    sendApiError(req, res, new ApiError("internal_error"), docBaseUrl);
  };
}
