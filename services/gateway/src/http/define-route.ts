import type { Request, Response } from "express";
import { ApiError, routeById, type OperationById, type OperationId, type RouteDef, type Static } from "@svc/contract";
import type { Caller } from "../caller";
import type { BodyReader, Handler, HandlerInput, Reply } from "./routes";

/** A TypeBox schema, as the contract's route table holds them. */
type Schema = NonNullable<RouteDef["body"]>;

/** `{name}` segments of a path template, each a string. */
type PathParams<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? { [K in Name]: string } & PathParams<Rest> : Record<never, string>;

type BodyOf<Op> = Op extends { body: infer S extends Schema } ? Static<S> : undefined;
type QueryOf<Op> = Op extends { query: infer S extends Schema } ? Static<S> : Record<never, never>;
type ParamsOf<Op> = Op extends { path: infer P extends string } ? PathParams<P> : Record<never, string>;
/** `key` routes always have a caller (the chain refuses the request otherwise); `optional` ones may; `none` never. */
type CallerOf<Op> = Op extends { auth: "key" } ? Caller : Op extends { auth: "optional" } ? Caller | undefined : undefined;

/** One documented response as a reply: its schema's type as the body; a streamed one (a `contentType`) is no reply. */
type ReplyFor<Status, R> = R extends { schema: infer B extends Schema }
  ? { status: Status; body: Static<B>; headers?: Record<string, string> }
  : R extends { contentType: string }
    ? never
    : { status: Status; body?: unknown; headers?: Record<string, string> };

/** Every reply operation `Id` documents, by status. */
export type ReplyTo<Id extends OperationId> =
  OperationById<Id> extends { responses: infer Rs } ? { [S in keyof Rs]: ReplyFor<S, Rs[S]> }[keyof Rs] : never;

/** `null` for an operation that streams its own response (the handler has written it). */
type StreamedBy<Id extends OperationId> =
  OperationById<Id> extends { responses: infer Rs } ? { [S in keyof Rs]: Rs[S] extends { contentType: string } ? null : never }[keyof Rs] : never;

/**
 * What a handler of operation `Id` receives, typed from the contract's schemas (the
 * route chain validated `body` and `query` against them): `body` is the request body
 * (or what the route's body reader made of it), `read` what else the reader made.
 */
export type RouteInput<Id extends OperationId, B = BodyOf<OperationById<Id>>, R = undefined> = {
  req: Request;
  res: Response;
  caller: CallerOf<OperationById<Id>>;
  body: B;
  query: QueryOf<OperationById<Id>>;
  params: ParamsOf<OperationById<Id>>;
  read: R;
};

/** A handler mounted by operationId. */
export type RouteHandler = Handler & { operationId: OperationId };

/**
 * Binds a handler to operation `operationId` of the contract:
 * `defineRoute("getLookup")(async ({ caller, params, query }) => ({ status: 200, body }))`.
 * Its input and its replies are typed from that operation's schemas, so the compiler
 * checks what the route chain validates at run time. (Two calls: the operation is
 * fixed first, so the handler is typed against its replies and a `status: 200`
 * stays the literal 200.) `recover` answers a retry whose resource a request that
 * died had created (Idempotency-Key); `reader` takes the body instead of the JSON
 * parser (the handler's `body` and `read` are then the reader's).
 */
export function defineRoute<Id extends OperationId>(operationId: Id) {
  const keyRequired = routeById(operationId).auth === "key";
  return <B = BodyOf<OperationById<Id>>, R = undefined>(
    handle: (input: RouteInput<Id, B, R>) => Promise<ReplyTo<Id> | StreamedBy<Id>>,
    options: { recover?: (input: RouteInput<Id, B, R>, resourceId: string) => Promise<ReplyTo<Id>>; reader?: BodyReader<B, R> } = {},
  ): RouteHandler => {
    // The one place the validated input meets its type: the chain authenticated the caller and validated the rest against the contract.
    const typed = (input: HandlerInput): RouteInput<Id, B, R> => {
      if (keyRequired && !input.caller) throw new ApiError("unauthorized");
      return input as unknown as RouteInput<Id, B, R>;
    };
    const { recover, reader } = options;
    const handler: Handler = (input) => handle(typed(input)) as Promise<Reply | null>;
    return Object.assign(handler, {
      operationId,
      ...(recover ? { recover: (input: HandlerInput, resourceId: string) => recover(typed(input), resourceId) as Promise<Reply> } : {}),
      ...(reader ? { reader } : {}),
    });
  };
}
