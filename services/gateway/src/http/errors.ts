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

export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err && typeof err === "object" && "type" in err) return fromParserError(err as { type?: string });
  return null;
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
