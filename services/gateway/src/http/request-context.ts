import type { NextFunction, Request, Response } from "express";
import { looksLikeId, newId } from "@svc/domain";
import type { Logger } from "@svc/runtime";

/**
 * What the access log says about the path: the matched route's template and its
 * id, if it is shaped like one of ours. The raw path is the client's text and may carry a
 * number or an address in any encoding; the query string and body are never logged.
 */
function loggedPath(req: Request): { route: string; id?: string } {
  if (!req.route) return { route: "(no route)" };
  const id = req.params?.id;
  return { route: `${req.baseUrl}${String(req.route.path)}`, ...(typeof id === "string" && looksLikeId(id) ? { id } : {}) };
}

/**
 * First middleware: a `req_…` id on every response (header and error body), a
 * child logger carrying it, and one access-log line per request.
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = newId("request");
    res.setHeader("X-Request-Id", req.id);
    req.log = logger.child({ reqId: req.id });
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // A 503 is the service shedding load or waiting out a data source, as designed: a
      // warning per request, not an error (a flood of them would drown real failures).
      const level = res.statusCode === 503 ? "warn" : res.statusCode >= 500 ? "error" : "info";
      req.log[level]({ method: req.method, ...loggedPath(req), status: res.statusCode, ms: Math.round(ms * 10) / 10, keyId: req.caller?.keyId }, "request");
    });
    next();
  };
}
