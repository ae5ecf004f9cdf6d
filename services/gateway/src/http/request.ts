import type { Logger } from "@svc/process";
import type { IdempotencyClaimRef } from "@svc/store";
import type { Caller } from "../caller";

/** What the HTTP layer adds to every Express request it handles, and what a handler answers. */
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
      caller?: Caller;
      /** The Idempotency-Key claim this request holds while its handler runs. */
      idempotencyClaim?: IdempotencyClaimRef;
    }
  }
}

/** A handler's answer; the route chain sends it (and the idempotency layer stores it). */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> };
