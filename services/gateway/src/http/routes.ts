import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { ApiError, ONE_MB, validateBody, validateQuery, type RouteDef } from "@svc/contract";
import type { Caller, Deps, Reply } from "../context";
import { applyDeprecation } from "./deprecation";
import { authenticate, requireScope } from "./authenticate";
import { readIdempotencyKey, requestHash, withIdempotency } from "./idempotency";
import { rateLimit } from "./rate-limit";
import { assertStorableInput } from "./text-input";

export type HandlerInput<B = unknown, Q = Record<string, unknown>> = {
  req: Request;
  res: Response;
  caller: Caller | undefined;
  body: B;
  query: Q;
  params: Record<string, string>;
};

/**
 * A route's handler. One that creates a lookup or job under an Idempotency-Key
 * also knows how to answer with that resource when a retry finds it created by a
 * request that died before answering (`recover`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Handler = ((input: HandlerInput<any, any>) => Promise<Reply | null>) & { recover?: (input: HandlerInput<any, any>, resourceId: string) => Promise<Reply> };

export type Handlers = Partial<Record<string, Handler>>;

const toExpressPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

const JSON_TYPES = ["application/json", "application/*+json"];

function hasBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/** Room for multipart boundaries and form fields around a file as large as the limit. */
const MULTIPART_OVERHEAD = 128 * 1024;

/** JSON body parsing with the route's size limit; any other media type is refused. */
function jsonBody(route: RouteDef): RequestHandler {
  const limit = route.bodyLimitBytes ?? ONE_MB;
  const parse = express.json({
    limit,
    type: JSON_TYPES,
    strict: true,
    verify: (req, _res, buf) => {
      (req as Request).rawBody = buf;
    },
  });
  return (req, res, next) => {
    // A body declared too large is answered at once, not after reading it all (Node
    // then discards what is still coming, so the client reads the 413, not a reset).
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > limit + (req.is("multipart/form-data") ? MULTIPART_OVERHEAD : 0)) {
      next(new ApiError("payload_too_large"));
      return;
    }
    if (hasBody(req) && !req.is(JSON_TYPES) && !(route.extraBodyTypes && req.is(Object.keys(route.extraBodyTypes)))) {
      next(new ApiError("invalid_request", { message: "The request body must be JSON (Content-Type: application/json)." }));
      return;
    }
    parse(req, res, next);
  };
}

function send(res: Response, reply: Reply): void {
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
  if (reply.body === undefined || reply.status === 204) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

/** Reads a non-JSON body (CSV upload) into the JSON shape the route's schema validates. */
export type BodyReader = (req: Request) => Promise<Record<string, unknown>>;

/**
 * The one path from the route table to Express: deprecation headers, key, scope,
 * body limits, storable text, schema validation, idempotency, then the handler.
 * Handlers never validate input by hand; they receive typed, validated `body` and `query`.
 */
function routeChain(deps: Deps, route: RouteDef, handler: Handler, renderError: (req: Request, err: ApiError) => Reply, bodyReader?: BodyReader): RequestHandler[] {
  const chain: RequestHandler[] = [
    (_req, res, next) => {
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
  if (route.body || route.method === "post" || route.method === "patch") chain.push(jsonBody(route));
  if (bodyReader) {
    chain.push(async (req, _res, next) => {
      try {
        if (req.is("multipart/form-data")) req.body = await bodyReader(req);
        next();
      } catch (err) {
        next(err);
      }
    });
  }
  chain.push(async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertStorableInput(req.params, "path");
      assertStorableInput(req.query, "query");
      assertStorableInput(req.body, "body");
      const input = (): HandlerInput => {
        const query = validateQuery<Record<string, unknown>>(route.query ?? EMPTY_QUERY, { ...(req.query as Record<string, unknown>) });
        let body: unknown = undefined;
        if (route.body) {
          if (req.body === undefined || req.body === null || typeof req.body !== "object" || Array.isArray(req.body)) {
            throw new ApiError("invalid_request", { message: "The request body must be a JSON object." });
          }
          body = validateBody(route.body, req.body);
        }
        return { req, res, caller: req.caller, body, query, params: req.params as Record<string, string> };
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
              requestHash(req, route.path, req.body),
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
  bodyReaders: Partial<Record<string, BodyReader>> = {},
): void {
  const byPath = new Map<string, RouteDef[]>();
  for (const route of routes) {
    if (!handlers[route.operationId]) continue;
    byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  }
  for (const [path, defs] of byPath) {
    const r = app.route(toExpressPath(path));
    for (const def of defs) r[def.method](...routeChain(deps, def, handlers[def.operationId] as Handler, renderError, bodyReaders[def.operationId]));
    const allow = defs.map((d) => d.method.toUpperCase()).concat(defs.some((d) => d.method === "get") ? ["HEAD"] : []).join(", ");
    r.all((_req, res, next) => {
      res.setHeader("Allow", allow);
      next(new ApiError("method_not_allowed"));
    });
  }
}
