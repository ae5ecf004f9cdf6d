import type { Logger } from "@svc/runtime";
import type { KeyMode, Scope } from "@svc/domain";
import type { IdempotencyClaimRef, KeyedSemaphore, NewLookup, Store } from "@svc/store";
import type { CompletionWaiter, Fleet, Producer } from "@svc/queues";
import type { RedisClient } from "@svc/queues";
import type { Resolve } from "@svc/webhooks";
import type { GatewayCaches } from "./cache/caches";
import type { GatewayConfig } from "./config";
import type { BulkIntake } from "./bulk/intake";
import type { BulkBody } from "./bulk/intake-task";
import type { GroupCommit } from "./lookups/test-batch";
import type { ReplicaReads } from "./reads/replica-reads";

/** Everything handlers need, built once in main.ts (or by a test). */
export type Deps = {
  config: GatewayConfig;
  logger: Logger;
  store: Store;
  redis: RedisClient;
  /** The fleet on Redis: prefix and message key (notices the gateway publishes are sealed with it). */
  fleet: Fleet;
  producer: Producer;
  waiter: CompletionWaiter;
  /** Key records and check offers, invalidated by Postgres notifications. */
  caches: GatewayCaches;
  /** This process's turns on each account row for reservations (see reserveAndCommit). */
  accountTurns: KeyedSemaphore;
  /** Threads that read, validate and plan bulk requests, fairly shared between accounts. */
  bulk: BulkIntake;
  /** Test lookups without an Idempotency-Key, written in groups (see testLookupWriter); drained before the pool closes. */
  testLookups: GroupCommit<NewLookup>;
  /** Which database answers the reads that tolerate lag (the read replica when set and current, else the primary). */
  reads: ReplicaReads;
  /** Resolves webhook URL hosts (injectable: tests never query a real resolver). */
  resolveHost: Resolve;
  /** Injectable clock (tests move time; production uses the wall clock). */
  now: () => Date;
};

/** The authenticated caller. */
export type Caller = {
  keyId: string;
  accountId: string;
  mode: KeyMode;
  livemode: boolean;
  isSandbox: boolean;
  scopes: Scope[];
  realtimeEnabled: boolean;
  retentionDays: number;
  dailySpendCapMicros: bigint | null;
};

/** A handler's answer; the route wrapper sends it (and the idempotency layer stores it). */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
      caller?: Caller;
      /** A bulk route's body as received, until an intake thread reads it. */
      bulkBody?: BulkBody;
      /** The Idempotency-Key claim this request holds while its handler runs. */
      idempotencyClaim?: IdempotencyClaimRef;
    }
  }
}
