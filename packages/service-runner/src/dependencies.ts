import { pingDatabase, type Store } from "@svc/store";
import { seedNodeError, type RedisClient } from "@svc/queues";
import { redisAddresses, redisPassword } from "@svc/config";

/** How long start-up waits for Redis to answer before it gives up (Postgres: the pool's connect timeout). */
export const DEPENDENCY_TIMEOUT_MS = 10_000;

/**
 * A dependency a service could not reach at start-up. The message names the
 * setting to fix and the address it points at, never the URL itself (it may
 * carry a password): `cannot reach Postgres at 127.0.0.1:5999 (DATABASE_URL):
 * connect ECONNREFUSED`.
 */
export class DependencyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DependencyError";
  }
}

/**
 * Start-up's one wait for the service's Postgres and Redis: resolves when the
 * database answers a query and every Redis connection is ready; otherwise
 * rejects with one line per unreachable dependency (Postgres first), each
 * naming its setting and address. Redis fails on its first connection error
 * rather than retrying quietly: an orchestrator restarting the process retries
 * just as well, and says why.
 */
export async function awaitDependencies(options: {
  store: Store;
  redis: readonly RedisClient[];
  config: { DATABASE_URL: string; REDIS_URL: string };
  timeoutMs?: number;
}): Promise<void> {
  const { config } = options;
  const [postgres, redis] = await Promise.allSettled([
    pingDatabase(options.store.pool),
    Promise.all(options.redis.map((r) => redisReady(r, options.timeoutMs ?? DEPENDENCY_TIMEOUT_MS))),
  ]);
  const problems: string[] = [];
  if (postgres.status === "rejected") problems.push(unreachable("Postgres", "DATABASE_URL", config.DATABASE_URL, postgres.reason));
  if (redis.status === "rejected") {
    // A cluster names no cause of its own; its first seed node asked alone does (a refused certificate, a wrong password).
    const seed = (redis.reason as { lastNodeError?: unknown } | undefined)?.lastNodeError ? await seedNodeError(config.REDIS_URL) : undefined;
    problems.push(unreachable("Redis", "REDIS_URL", config.REDIS_URL, seed ? { lastNodeError: seed } : redis.reason));
  }
  if (problems.length > 0) throw new DependencyError(problems.join("; "));
}

/** Resolves once `redis` is ready; rejects with its first connection error, or after `timeoutMs`. */
function redisReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => settle(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    const onReady = () => settle();
    const onError = (err: Error) => settle(err);
    const settle = (err?: Error) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("error", onError);
      if (err) reject(err);
      else resolve();
    };
    redis.on("ready", onReady);
    redis.on("error", onError);
  });
}

/** `cannot reach <what> at <host:port> (<setting>): <reason>`, with no credentials anywhere. */
export function unreachable(what: string, setting: string, url: string, err: unknown): string {
  return `cannot reach ${what} at ${addressOf(url)} (${setting}): ${reasonOf(err, url)}`;
}

/** host:port of a connection URL (default ports filled in); never its user or password. */
export function addressOf(url: string): string {
  // REDIS_URL may name a cluster's nodes (redis+cluster://h1:p1,h2:p2), which URL cannot parse.
  if (url.startsWith("redis")) return redisAddresses(url);
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol.startsWith("redis") ? "6379" : u.protocol.startsWith("postgres") ? "5432" : "");
    const host = u.hostname || "localhost";
    return port ? `${host}:${port}` : host;
  } catch {
    return "an unparsable address";
  }
}

/**
 * The cause in a few words: `connect ECONNREFUSED` for socket errors (the
 * address is already in the line), the server's own message otherwise. Node
 * reports a name that resolves to several addresses as an AggregateError with an
 * empty message; its first error speaks for it. The URL's password is removed
 * should a message ever echo it.
 */
function reasonOf(err: unknown, url: string): string {
  // A cluster client that reached no seed node says "Failed to refresh slots cache."; the last node's error says why.
  const lastNodeError = (err as { lastNodeError?: unknown } | undefined)?.lastNodeError;
  if (lastNodeError) return `no cluster node answered (${reasonOf(lastNodeError, url)})`;
  const outer = err as (NodeJS.ErrnoException & { errors?: unknown[] }) | undefined;
  const inner = (outer instanceof AggregateError && outer.errors?.[0] ? outer.errors[0] : outer) as NodeJS.ErrnoException | undefined;
  const code = inner?.code ?? outer?.code;
  const syscall = inner?.syscall ?? outer?.syscall;
  let text: string;
  if (code && syscall) text = `${syscall} ${code}`;
  else text = (inner?.message || outer?.message || code || String(err)).split("\n")[0]!;
  let password = "";
  try {
    password = url.startsWith("redis") ? redisPassword(url) : decodeURIComponent(new URL(url).password);
  } catch {
    /* unparsable: nothing to remove */
  }
  if (password) text = text.split(password).join("[redacted]");
  return text;
}
