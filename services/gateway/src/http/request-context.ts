import type { NextFunction, Request, Response } from "express";
import { looksLikeId, newId } from "@svc/domain";
import type { Logger } from "@svc/runtime";
import { metrics } from "@svc/telemetry";

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

/** Methods counted under their own name; anything else a client sends is "OTHER" (labels stay bounded). */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * First middleware: a `req_…` id on every response (header and error body), a
 * child logger carrying it, one access-log line per request, and the request in
 * the RED metrics under its route template (never the raw path).
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = newId("request");
    res.setHeader("X-Request-Id", req.id);
    req.log = logger.child({ reqId: req.id });
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const path = loggedPath(req);
      const status = res.statusCode;
      const method = METHODS.has(req.method) ? req.method : "OTHER";
      metrics.httpRequests().inc({ method, route: path.route, status: String(status) });
      metrics.httpDuration().observe({ method, route: path.route, status_class: `${Math.floor(status / 100)}xx` }, ms / 1000);
      // A 503 is the service shedding load or waiting out a data source, as designed: a
      // warning per request, not an error (a flood of them would drown real failures).
      const level = status === 503 ? "warn" : status >= 500 ? "error" : "info";
      req.log[level]({ method: req.method, ...path, status, ms: Math.round(ms * 10) / 10, keyId: req.caller?.keyId }, "request");
    });
    next();
  };
}
