import type { NextFunction, Request, Response } from "express";
import { newId } from "@svc/domain";
import type { Logger } from "@svc/runtime";

/**
 * First middleware: a `req_…` id on every response (header and error body), a
 * child logger carrying it, and one access-log line per request. Only the path is
 * logged, never the query string or body (they may hold keys or identifiers).
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = newId("request");
    res.setHeader("X-Request-Id", req.id);
    req.log = logger.child({ reqId: req.id });
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const level = res.statusCode >= 500 ? "error" : "info";
      req.log[level]({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10, keyId: req.caller?.keyId }, "request");
    });
    next();
  };
}
