import type { Cluster, Redis } from "ioredis";

/**
 * A circuit breaker per route. After `threshold` consecutive failures the route is
 * open for `cooldownMs`: calls skip it (failing over) instead of waiting on timeouts.
 * After the cooldown one trial call is let through (half-open); success closes it.
 * The open state is also written to Redis, so every replica and the gateway see a
 * route that is down (the gateway answers 503 when every route of a check is).
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(
    readonly route: string,
    private readonly redis: Redis | Cluster | null,
    private readonly prefix: string,
    private readonly threshold = 5,
    private readonly cooldownMs = 10_000,
  ) {}

  /** May a call go to this route now? */
  allow(now = Date.now()): boolean {
    if (this.openUntil === 0) return true;
    if (now < this.openUntil || this.trialInFlight) return false;
    this.trialInFlight = true; // half-open: one trial
    return true;
  }

  success(): void {
    this.failures = 0;
    this.trialInFlight = false;
    if (this.openUntil !== 0) {
      this.openUntil = 0;
      void this.redis?.del(breakerKey(this.prefix, this.route)).catch(() => undefined);
    }
  }

  failure(now = Date.now()): void {
    this.failures += 1;
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    if (wasTrial || this.failures >= this.threshold) {
      this.openUntil = now + this.cooldownMs;
      void this.redis?.set(breakerKey(this.prefix, this.route), "open", "PX", this.cooldownMs).catch(() => undefined);
    }
  }

  get isOpen(): boolean {
    return this.openUntil !== 0 && Date.now() < this.openUntil;
  }
}

/**
 * The routes every check advertises and the routes' breaker states share one hash
 * tag (`{<REDIS_PREFIX>:sources}`), so on a Redis Cluster they sit in one slot: the
 * gateway reads them with one MGET, a worker advertises them in one MULTI.
 */
const sourcesTag = (prefix: string) => `{${prefix}:sources}`;
export const breakerKey = (prefix: string, route: string) => `${sourcesTag(prefix)}:breaker:${route}`;
export const routesKey = (prefix: string, check: string) => `${sourcesTag(prefix)}:routes:${check}`;
