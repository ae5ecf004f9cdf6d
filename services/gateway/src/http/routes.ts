import type { Express, NextFunction, Request, RequestHandler, Response } from "express";
import { ApiError, validateBody, validateQuery, type RouteDef } from "@svc/contract";
import { nameServerSpan } from "@svc/process";
import type { Caller } from "../caller";
import { authenticate, requireScope, type AuthDeps } from "./authenticate";
import { jsonBody } from "./body";
import { applyDeprecation } from "./deprecation";
import { readIdempotencyKey, withIdempotency, type IdempotencyDeps } from "./idempotency";
import { rateLimit, type RateLimitDeps } from "./rate-limit";
import { requestHash } from "./request-hash";
import type { Reply } from "./request";
import { assertStorableInput } from "./text-input";

export type { Reply } from "./request";

/**
 * What the route chain hands a handler, validated but untyped; defineRoute types it
 * from the contract.
 */
export type HandlerInput = {
  req: Request;
  res: Response;
  caller: Caller | undefined;
  body: unknown;
  query: Record<string, unknown>;
  params: Record<string, string>;
  /** Routes with a body reader: what it made of the body (`body` then holds what it gave the handler). */
  read?: unknown;
};

/**
 * Takes a route's body instead of the JSON parser (bulk intake does): `receive`
 * takes it in after the key and scope are checked; `read`, once the query is
 * valid, turns it into the handler's `body` and what else it made of it (`read`),
 * with the hash an Idempotency-Key is bound to. Its refusals come before the
 * Idempotency-Key is looked at.
 */
export type BodyReader<B = unknown, R = unknown> = {
  receive(route: RouteDef): RequestHandler;
  read(req: Request, res: Response, caller: Caller): Promise<{ body: B; read: R; hash: string }>;
};

/**
 * A route's handler (see defineRoute). One that creates a lookup or job under an
 * Idempotency-Key also knows how to answer with that resource when a retry finds it
 * created by a request that died before answering (`recover`).
 */
export type Handler = ((input: HandlerInput) => Promise<Reply | null>) & {
  recover?: (input: HandlerInput, resourceId: string) => Promise<Reply>;
  /** Its body is taken by this reader, not parsed as JSON here. */
  reader?: BodyReader;
};

export type Handlers = Partial<Record<string, Handler>>;

/** What the route chain uses: the key's lookup, the rate limiter, the idempotency records. */
export type RouteDeps = AuthDeps & RateLimitDeps & IdempotencyDeps;

const toExpressPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

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
 * A route whose handler has a body reader (bulk routes) gets its body from that
 * reader instead (the Idempotency-Key hash then comes from it too).
 */
function routeChain(deps: RouteDeps, route: RouteDef, handler: Handler, renderError: (req: Request, err: ApiError) => Reply): RequestHandler[] {
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
  const { reader } = handler;
  if (reader) chain.push(reader.receive(route));
  else if (route.body || route.method === "post" || route.method === "patch") chain.push(jsonBody(route));
  chain.push(async (req: Request, res: Response, next: NextFunction) => {
    try {
      assertStorableInput(req.params, "path");
      assertStorableInput(req.query, "query");
      if (!reader) assertStorableInput(req.body, "body");
      const query = validateQuery<Record<string, unknown>>(route.query ?? EMPTY_QUERY, { ...(req.query as Record<string, unknown>) });
      const taken = reader && req.caller ? await reader.read(req, res, req.caller) : undefined;
      const input = (): HandlerInput => {
        let body: unknown = taken?.body;
        if (route.body && !taken) {
          if (req.body === undefined || req.body === null || typeof req.body !== "object" || Array.isArray(req.body)) {
            throw new ApiError("invalid_request", { message: "The request body must be a JSON object." });
          }
          body = validateBody(route.body, req.body);
        }
        return { req, res, caller: req.caller, body, query, params: req.params as Record<string, string>, ...(taken ? { read: taken.read } : {}) };
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
              taken?.hash ?? requestHash(req.method, route.path, req.body),
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
  app: Express,
  deps: RouteDeps,
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
