import type { Cluster, Redis } from "ioredis";
import type { Answer, CheckCode } from "@svc/domain";
import { metrics, onScrape, sourceOutcome } from "@svc/metrics";
import { CircuitBreaker, routesKey } from "./breaker";
import { Semaphore } from "./semaphore";
import { SourceError, type Identifier, type RouteLimits, type Source } from "./types";

type Route = { source: Source; limits: RouteLimits; breaker: CircuitBreaker; semaphore: Semaphore };

const UNKNOWN: Answer = { status: "unknown", registered: null, attributes: null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a check against its routes in order: each call has a timeout, a concurrency
 * limit and retries with backoff and jitter; a route whose breaker is open is
 * skipped. When no route can answer the result is `unknown` (inconclusive, free).
 */
export class CheckRunner {
  private readonly routes = new Map<CheckCode, Route[]>();

  constructor(
    private readonly redis: Redis | Cluster | null,
    private readonly prefix: string,
    private readonly onError: (route: string, err: unknown) => void = () => undefined,
  ) {}

  add(source: Source, limits: RouteLimits): this {
    const list = this.routes.get(source.check) ?? [];
    const breaker = new CircuitBreaker(source.route, this.redis, this.prefix);
    list.push({ source, limits, breaker, semaphore: new Semaphore(limits.concurrency) });
    this.routes.set(source.check, list);
    watchBreaker(breaker);
    return this;
  }

  /** A check served by no route at all (advertised as such, so the gateway answers 503). */
  declare(check: CheckCode): this {
    if (!this.routes.has(check)) this.routes.set(check, []);
    return this;
  }

  routeNames(check: CheckCode): string[] {
    return (this.routes.get(check) ?? []).map((r) => r.source.route);
  }

  /**
   * Answers many identifiers for one check. Batching sources get one call per batch
   * per route; a failed batch moves on to the next route as a whole. Whatever no
   * route could answer is `unknown`.
   */
  async runMany(check: CheckCode, ids: readonly Identifier[]): Promise<Answer[]> {
    const answers: Array<Answer | undefined> = new Array(ids.length);
    const answeredBy: string[] = new Array(ids.length);
    const routes = this.routes.get(check) ?? [];
    let open = ids.map((_, i) => i);
    for (const [n, route] of routes.entries()) {
      if (open.length === 0) break;
      if (n > 0) metrics.sourceFailovers().inc({ check }, open.length);
      const lookupMany = route.source.lookupMany?.bind(route.source);
      if (!lookupMany) {
        await Promise.all(
          open.map(async (i) => {
            answers[i] = await this.runOn(route, ids[i] as Identifier);
            answeredBy[i] = route.source.route;
          }),
        );
        open = open.filter((i) => answers[i] === undefined);
        continue;
      }
      const size = route.source.maxBatch ?? 100;
      const batches: number[][] = [];
      for (let b = 0; b < open.length; b += size) batches.push(open.slice(b, b + size));
      const failed: number[] = [];
      await Promise.all(
        batches.map(async (batch) => {
          if (!route.breaker.allow()) {
            failed.push(...batch);
            return;
          }
          try {
            const got = await this.withRetries(route, (signal) => lookupMany(batch.map((i) => ids[i] as Identifier), signal));
            route.breaker.success();
            batch.forEach((i, j) => {
              answers[i] = got[j] ?? UNKNOWN;
              answeredBy[i] = route.source.route;
            });
          } catch (err) {
            route.breaker.failure();
            this.onError(route.source.route, err);
            failed.push(...batch);
          }
        }),
      );
      open = failed.sort((a, b) => a - b);
    }
    const out = Array.from(answers, (a) => a ?? UNKNOWN); // not .map: it skips the holes of unanswered slots
    out.forEach((a, i) => countAnswer(check, answers[i] ? (answeredBy[i] as string) : "none", a));
    return out;
  }

  /** One identifier on one route; undefined when the route could not answer. */
  private async runOn(route: Route, id: Identifier): Promise<Answer | undefined> {
    if (!route.breaker.allow()) return undefined;
    try {
      const answer = await this.withRetries(route, (signal) => route.source.lookup(id, signal));
      route.breaker.success();
      return answer;
    } catch (err) {
      route.breaker.failure();
      this.onError(route.source.route, err);
      return undefined;
    }
  }

  async run(check: CheckCode, id: Identifier): Promise<Answer> {
    for (const [n, route] of (this.routes.get(check) ?? []).entries()) {
      if (n > 0) metrics.sourceFailovers().inc({ check });
      const answer = await this.runOn(route, id);
      if (answer) {
        countAnswer(check, route.source.route, answer);
        return answer;
      }
    }
    countAnswer(check, "none", UNKNOWN);
    return UNKNOWN;
  }

  /** A call with the route's concurrency limit and timeout, retried with backoff and jitter. */
  private async withRetries<T>(route: Route, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let lastError: unknown;
    const source = route.source.route;
    for (let attempt = 0; attempt <= route.limits.retries; attempt += 1) {
      if (attempt > 0) {
        metrics.sourceRetries().inc({ source });
        await sleep(Math.min(2_000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
      try {
        return await route.semaphore.run(async () => {
          // Timed inside the semaphore: the source's own latency, not the wait for a turn.
          const started = process.hrtime.bigint();
          const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
          try {
            const result = await call(AbortSignal.timeout(route.limits.timeoutMs));
            metrics.sourceDuration().observe({ source, outcome: "ok" }, seconds());
            return result;
          } catch (err) {
            metrics.sourceDuration().observe({ source, outcome: sourceOutcome(err) }, seconds());
            throw err;
          }
        });
      } catch (err) {
        lastError = err;
        const retryable = err instanceof SourceError ? err.retryable : true;
        if (!retryable) throw err;
      }
    }
    throw lastError;
  }

  /**
   * Tells the gateway which routes serve each check (refreshed periodically, with a
   * TTL, so a fleet with no worker advertises nothing rather than stale routes).
   */
  async advertise(ttlMs = 30_000): Promise<void> {
    if (!this.redis) return;
    const multi = this.redis.multi();
    for (const [check, routes] of this.routes) multi.set(routesKey(this.prefix, check), JSON.stringify(routes.map((r) => r.source.route)), "PX", ttlMs);
    await multi.exec();
  }
}

/** Counts one answer; the outcome is the answer's status (a bounded set: the contract's check statuses). */
function countAnswer(check: CheckCode, source: string, answer: Answer): void {
  metrics.checkAnswers().inc({ check, source, outcome: answer.status });
}

/**
 * Breaker states are read when scraped. One breaker per route name: a process
 * that builds its runner again (tests) reports the newest.
 */
const breakers = new Map<string, CircuitBreaker>();
let breakersWatched = false;
function watchBreaker(breaker: CircuitBreaker): void {
  breakers.set(breaker.route, breaker);
  metrics.sourceBreakerOpen().set({ source: breaker.route }, 0);
  if (breakersWatched) return;
  breakersWatched = true;
  onScrape("source breakers", () => {
    for (const [route, b] of breakers) metrics.sourceBreakerOpen().set({ source: route }, b.isOpen ? 1 : 0);
  });
}
