import type { Logger } from "@svc/process";
import type { KeyedSemaphore, Store } from "@svc/store";
import type { CompletionWaiter, Fleet, Producer, RedisClient } from "@svc/queues";
import type { Resolve } from "@svc/webhooks";
import type { GatewayCaches } from "./cache/caches";
import type { GatewayConfig } from "./config";
import type { ReplicaReads } from "./reads/replica-reads";

/**
 * What a gateway process holds, built once in main.ts (or by a test). No module takes
 * all of it: each names the part it uses (`Pick<Deps, "store" | "now">`), so its
 * signature says what it touches. What only one feature uses (the intake threads,
 * the test-lookup writer) is that feature's own; app.ts adds them (GatewayDeps).
 */
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
  /** Which database answers the reads that tolerate lag (the read replica when set and current, else the primary). */
  reads: ReplicaReads;
  /** Resolves webhook URL hosts (injectable: tests never query a real resolver). */
  resolveHost: Resolve;
  /** Injectable clock (tests move time; production uses the wall clock). */
  now: () => Date;
};
