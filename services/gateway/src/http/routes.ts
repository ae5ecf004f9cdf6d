import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError, ONE_MB, validateBody, validateQuery, type RouteDef } from "@svc/contract";
import { nameServerSpan } from "@svc/runtime";
import type { Caller, Deps, Reply } from "../context";
import { intakeTenant } from "../bulk/intake";
import type { BulkBody, BulkOperation, Intake } from "../bulk/intake-task";
import { ownedBytes, receiveJobForm } from "../jobs/csv-upload";
import { fromRefusal } from "../requests/prepare";
import { applyDeprecation } from "./deprecation";
import { authenticate, requireScope } from "./authenticate";
import { clientGone } from "./client-gone";
import { readIdempotencyKey, withIdempotency } from "./idempotency";
import { rateLimit } from "./rate-limit";
import { requestHash } from "./request-hash";
import { assertStorableInput } from "./text-input";

/** A bulk request read and planned on an intake thread, with the id its resource will have. */
export type AcceptedIntake = Extract<Intake, { ok: true }> & { resourceId: string | null };

export type HandlerInput<B = unknown, Q = Record<string, unknown>> = {
  req: Request;
  res: Response;
  caller: Caller | undefined;
  body: B;
  query: Q;
  params: Record<string, string>;
  /** Bulk routes: what the intake thread made of the body (`body` then holds the fields other than identifiers). */
  intake?: AcceptedIntake;
};

/**
 * A route's handler. One that creates a lookup or job under an Idempotency-Key
 * also knows how to answer with that resource when a retry finds it created by a
 * request that died before answering (`recover`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Handler = ((input: HandlerInput<any, any>) => Promise<Reply | null>) & {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  recover?: (input: HandlerInput<any, any>, resourceId: string) => Promise<Reply>;
  /** A bulk route: its body is read on an intake thread (`newResourceId` names what it may create). */
  bulk?: { operation: BulkOperation; newResourceId?: () => string };
};

export type Handlers = Partial<Record<string, Handler>>;

const toExpressPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

const JSON_TYPES = ["application/json", "application/*+json"];

function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/** Room for multipart boundaries and form fields around a file as large as the limit. */
const MULTIPART_OVERHEAD = 128 * 1024;

/**
 * Refuses, before reading it, a body declared over the route's limit (Node then
 * discards what is still coming, so the client reads the 413, not a reset) or of a
 * media type the route does not take.
 */
function refuseBodyUpFront(req: Request, route: RouteDef): ApiError | null {
  const limit = route.bodyLimitBytes ?? ONE_MB;
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > limit + (req.is("multipart/form-data") ? MULTIPART_OVERHEAD : 0)) return new ApiError("payload_too_large");
  if (hasBody(req) && !req.is(JSON_TYPES) && !(route.extraBodyTypes && req.is(Object.keys(route.extraBodyTypes)))) {
    return new ApiError("invalid_request", { message: "The request body must be JSON (Content-Type: application/json)." });
  }
  return null;
}

/** An error shaped as body-parser's of that `type`, so errors.ts maps it to the same error object. */
const parserError = (type: string) => Object.assign(new Error(type), { type, status: 400 });

/** Plain UTF-8 JSON, the form nearly every client sends: what readPlainJson handles. */
const PLAIN_JSON = /^application\/json(?:\s*;\s*charset\s*=\s*(?:utf-8|"utf-8"))?$/i;
/** JSON's whitespace, as body-parser's strict check skips it. */
const FIRST_JSON_CHAR = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d])/;

/**
 * A small body with a Content-Length, no Content-Encoding, `application/json` in
 * UTF-8 (the form nearly every request takes), read and parsed as body-parser's
 * strict JSON parser reads it — a leading BOM dropped, an empty body `{}`, a first
 * character other than `{` or `[` a parse error, a short or aborted body "incomplete" —
 * without its generic machinery (type-is, content-type, iconv, raw-body, on-finished):
 * a profile under load showed that chain at ~4 % of the gateway's busy time for a
 * 60-byte body. Anything else goes through express.json.
 */
function readPlainJson(req: Request, length: number, next: NextFunction): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const done = (err: unknown) => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("aborted", onAborted);
    req.off("error", onError);
    next(err);
  };
  const onAborted = () => done(parserError("request.aborted"));
  const onError = () => done(Object.assign(new Error("the request body could not be read"), { status: 400 }));
  const onEnd = () => {
    if (received !== length) return done(parserError("request.size.invalid"));
    let text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received)).toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length === 0) {
      req.body = {};
      return done(undefined);
    }
    const first = FIRST_JSON_CHAR.exec(text)?.[1];
    if (first !== "{" && first !== "[") return done(parserError("entity.parse.failed"));
    try {
      req.body = JSON.parse(text);
    } catch {
      return done(parserError("entity.parse.failed"));
    }
    done(undefined);
  };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("aborted", onAborted);
  req.on("error", onError);
}

/** JSON body parsing with the route's size limit; any other media type is refused. */
function jsonBody(route: RouteDef): RequestHandler {
  const limit = route.bodyLimitBytes ?? ONE_MB;
  const parse = express.json({ limit, type: JSON_TYPES, strict: true });
  return (req, res, next) => {
    const refused = refuseBodyUpFront(req, route);
    if (refused) return next(refused);
    const h = req.headers;
    const length = Number(h["content-length"]);
    if (
      length > 0 &&
      length <= limit &&
      h["transfer-encoding"] === undefined &&
      h["content-encoding"] === undefined &&
      !req.readableEnded &&
      req.body === undefined &&
      PLAIN_JSON.test(h["content-type"] ?? "")
    ) {
      req.body = undefined;
      return readPlainJson(req, length, next);
    }
    parse(req, res, next);
  };
}

const UTF8 = /^utf-?8$/i;

/**
 * A bulk route's body, received but not decoded: JSON as bytes (decompressed, within
 * the limit), a CSV upload as its file and fields. Decoding, validation and planning
 * happen on an intake thread. A tenant whose share of the threads is full is
 * answered 503 before its body is read.
 */
function bulkBody(deps: Deps, route: RouteDef): RequestHandler {
  const limit = route.bodyLimitBytes ?? ONE_MB;
  const raw = express.raw({ limit, type: JSON_TYPES });
  return (req, res, next) => {
    const refused = refuseBodyUpFront(req, route);
    if (refused) return next(refused);
    try {
      if (req.caller) deps.bulk.assertRoom(intakeTenant(req, req.caller));
    } catch (err) {
      return next(err);
    }
    if (req.is("multipart/form-data")) {
      receiveJobForm(req, limit).then((form) => {
        req.bulkBody = { type: "form", form };
        next();
      }, next);
      return;
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1];
    if (charset !== undefined && !UTF8.test(charset)) {
      return next(new ApiError("invalid_request", { message: "The request body must be UTF-8 encoded JSON." }));
    }
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      const bytes = Buffer.isBuffer(req.body) ? ownedBytes([req.body], req.body.length) : new Uint8Array(0);
      req.body = undefined;
      req.bulkBody = { type: "json", bytes };
      next();
    });
  };
}

/** Reads a bulk body on an intake thread, in the tenant's turn; refusals become the client's error. */
async function readBulk(deps: Deps, req: Request, res: Response, bulk: NonNullable<Handler["bulk"]>): Promise<AcceptedIntake> {
  const caller = req.caller as Caller;
  const body = req.bulkBody as BulkBody;
  req.bulkBody = undefined;
  const resourceId = bulk.newResourceId?.() ?? null;
  const intake = await deps.bulk.run(
    intakeTenant(req, caller),
    { operation: bulk.operation, body, caller: { isSandbox: caller.isSandbox, livemode: caller.livemode }, now: deps.now().getTime(), jobId: resourceId },
    clientGone(res),
  );
  if (!intake.ok) throw fromRefusal(intake.refusal);
  return { ...intake, resourceId };
}

/**
 * A JSON reply written as Express's `res.json` writes it (same status, Content-Type
 * and Content-Length, one `end`) without its generic steps (content negotiation of
 * the charset, ETag and freshness checks, which nothing here uses: ETags are off and
 * no reply sets Last-Modified). A request with a conditional header or a reply that
 * sets its own Content-Type still goes through `res.json`.
 */
function send(res: Response, reply: Reply): void {
  const headers = reply.headers;
  if (headers) for (const k in headers) res.setHeader(k, headers[k] as string);
  if (reply.body === undefined || reply.status === 204) {
    res.status(reply.status).end();
    return;
  }
  const req = res.req;
  if (req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined || res.hasHeader("Content-Type")) {
    res.status(reply.status).json(reply.body);
    return;
  }
  const json = JSON.stringify(reply.body);
  res.statusCode = reply.status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(json));
  res.end(json);
}

/**
 * The one path from the route table to Express: deprecation headers, key, scope,
 * body limits, storable text, schema validation, idempotency, then the handler.
 * Handlers never validate input by hand; they receive typed, validated `body` and `query`.
 * Bulk routes receive their body raw and have it decoded, validated and planned on
 * an intake thread in their account's turn (the Idempotency-Key hash comes from there).
 */
function routeChain(deps: Deps, route: RouteDef, handler: Handler, renderError: (req: Request, err: ApiError) => Reply): RequestHandler[] {
  const chain: RequestHandler[] = [
    (_req, res, next) => {
      nameServerSpan(route.method.toUpperCase(), route.path);
      applyDeprecation(res, route.deprecation);
      next();
    },
  ];
  if (route.auth !== "none") chain.push(authenticate(deps, route.auth), rateLimit(deps));
  chain.push((req, _res, next) => {
    try {
      if (route.scopes?.includes("webhooks:manage") && req.caller?.isSandbox) {
        throw new ApiError("invalid_request", { message: "Webhooks are not available with the public sandbox key." });
      }
      if (route.scopes && req.caller) requireScope(req.caller, route.scopes);
      next();
    } catch (err) {
      next(err);
    }
  });
  const { bulk } = handler;
  if (bulk) chain.push(bulkBody(deps, route));
  else if (route.body || route.method === "post" || route.method === "patch") chain.push(jsonBody(route));
  chain.push(async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertStorableInput(req.params, "path");
      assertStorableInput(req.query, "query");
      if (!bulk) assertStorableInput(req.body, "body");
      const query = validateQuery<Record<string, unknown>>(route.query ?? EMPTY_QUERY, { ...(req.query as Record<string, unknown>) });
      const intake = bulk && req.caller ? await readBulk(deps, req, res, bulk) : undefined;
      const input = (): HandlerInput => {
        let body: unknown = intake?.fields;
        if (route.body && !intake) {
          if (req.body === undefined || req.body === null || typeof req.body !== "object" || Array.isArray(req.body)) {
            throw new ApiError("invalid_request", { message: "The request body must be a JSON object." });
          }
          body = validateBody(route.body, req.body);
        }
        return { req, res, caller: req.caller, body, query, params: req.params as Record<string, string>, ...(intake ? { intake } : {}) };
      };
      const { recover } = handler;
      const key = route.idempotent && req.caller ? readIdempotencyKey(req) : undefined;
      const reply =
        key !== undefined && req.caller
          ? await withIdempotency(
              deps,
              req,
              req.caller,
              key,
              intake?.hash ?? requestHash(req.method, route.path, req.body),
              async () => (await handler(input())) as Reply,
              (err) => renderError(req, err),
              recover && ((resourceId) => recover(input(), resourceId)),
            )
          : await handler(input());
      if (reply) send(res, reply); // null: the handler streamed its own response
    } catch (err) {
      next(err);
    }
  });
  return chain;
}

const EMPTY_QUERY = { type: "object", properties: {}, additionalProperties: false } as unknown as NonNullable<RouteDef["query"]>;

export function mountRoutes(
  app: express.Express,
  deps: Deps,
  routes: readonly RouteDef[],
  handlers: Handlers,
  renderError: (req: Request, err: ApiError) => Reply,
): void {
  const byPath = new Map<string, RouteDef[]>();
  for (const route of routes) {
    if (!handlers[route.operationId]) continue;
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  }
  for (const [path, defs] of byPath) {
    const r = app.route(toExpressPath(path));
    for (const def of defs) r[def.method](...routeChain(deps, def, handlers[def.operationId] as Handler, renderError));
    const allow = defs.map((d) => d.method.toUpperCase()).concat(defs.some((d) => d.method === "get") ? ["HEAD"] : []).join(", ");
    r.all((_req, res, next) => {
      res.setHeader("Allow", allow);
      next(new ApiError("method_not_allowed"));
    });
  }
}
