import type { NextFunction, Request, Response } from "express";
import { looksLikeId, newId } from "@svc/domain";
import type { Logger } from "@svc/process";
import { metrics } from "@svc/metrics";

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

const BASE_LOG = Symbol("baseLog");
const OWN_LOG = Symbol("ownLog");
const STARTED = Symbol("started");
type ContextRequest = Request & { [BASE_LOG]?: Logger; [OWN_LOG]?: Logger; [STARTED]?: bigint };

/**
 * `req.log`, the request's child logger (carrying its `reqId`), made when first used:
 * a profile under load showed pino's `child` on every request (~1.5 % of the busy
 * time) while most requests log nothing but the access line, which a level of `warn`
 * skips too. Installed once on the application's request prototype.
 */
export function installRequestLog(proto: object): void {
  Object.defineProperty(proto, "log", {
    configurable: true,
    get(this: ContextRequest): Logger {
      let log = this[OWN_LOG];
      if (!log) {
        log = (this[BASE_LOG] as Logger).child({ reqId: this.id });
        this[OWN_LOG] = log;
      }
      return log;
    },
    set(this: ContextRequest, log: Logger) {
      this[OWN_LOG] = log;
    },
  });
}

/** The access-log line and the RED metrics, once the response is sent (one shared listener, no closure per request). */
function onFinish(this: Response): void {
  const req = this.req as ContextRequest;
  const ms = Number(process.hrtime.bigint() - (req[STARTED] as bigint)) / 1e6;
  const path = loggedPath(req);
  const status = this.statusCode;
  const method = METHODS.has(req.method) ? req.method : "OTHER";
  metrics.httpRequests().inc({ method, route: path.route, status: String(status) });
  metrics.httpDuration().observe({ method, route: path.route, status_class: `${Math.floor(status / 100)}xx` }, ms / 1000);
  // A 503 is the service shedding load or waiting out a data source, as designed: a
  // warning per request, not an error (a flood of them would drown real failures).
  const level = status === 503 ? "warn" : status >= 500 ? "error" : "info";
  if (!(req[BASE_LOG] as Logger).isLevelEnabled(level)) return;
  req.log[level]({ method: req.method, ...path, status, ms: Math.round(ms * 10) / 10, keyId: req.caller?.keyId }, "request");
}

/**
 * First middleware: a `req_…` id on every response (header and error body), a
 * child logger carrying it, one access-log line per request, and the request in
 * the RED metrics under its route template (never the raw path). The application
 * installs `req.log` first (installRequestLog).
 */
export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const r = req as ContextRequest;
    r.id = newId("request");
    res.setHeader("X-Request-Id", r.id);
    r[BASE_LOG] = logger;
    r[STARTED] = process.hrtime.bigint();
    res.on("finish", onFinish);
    next();
  };
}
