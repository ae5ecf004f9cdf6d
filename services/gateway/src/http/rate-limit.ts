import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { ApiError, LIMITS } from "@svc/contract";
import { networkOf } from "@svc/domain";
import { serverGroupOf, type RedisClient } from "@svc/queues";
import type { Deps } from "../deps";
import { secondsUntilUtcMidnight, utcDay } from "../time";

/**
 * GCRA (generic cell rate algorithm) in one Lua script: per key, 10 requests a
 * second with bursts of 20, exact across every gateway replica because the state
 * and the clock (Redis TIME) are shared. Returns 0 when allowed, else the
 * milliseconds until the next request would be.
 */
export const GCRA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if allow_at > now then return allow_at - now end
redis.call('SET', KEYS[1], new_tat, 'PX', new_tat - now)
return 0`;

/** Fixed windows for the public sandbox key, per caller IP: a minute and a UTC day. */
export const WINDOWS = `
local minute = redis.call('INCR', KEYS[1])
if minute == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
local day = redis.call('INCR', KEYS[2])
if day == 1 then redis.call('EXPIRE', KEYS[2], 172800) end
local ttl = redis.call('PTTL', KEYS[1])
return {minute, day, ttl}`;

type ScriptRedis = Pick<RedisClient, "eval" | "evalsha">;

export type RateLimitDeps = Pick<Deps, "config" | "redis" | "now">;

const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith("NOSCRIPT");

/**
 * A Lua script run by its SHA-1 (EVALSHA): every request sends 40 bytes instead of the
 * script, and Redis skips hashing it again. A Redis that does not know the script yet
 * (restarted, flushed, another replica's first call) answers NOSCRIPT: then it is sent
 * once with EVAL, which also caches it.
 */
export function luaScript(source: string) {
  const sha = createHash("sha1").update(source).digest("hex");
  return async (redis: ScriptRedis, keys: readonly string[], args: readonly string[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}

/**
 * A one-key script whose calls are batched: the calls made while this event-loop turn
 * handles its I/O (several requests read from several sockets) go to Redis as one
 * pipeline, one write and one read, each still its own EVALSHA, atomic in Redis as
 * before. A profile under load showed the limiter's socket write alone at ~7 % of
 * the gateway's busy time, one write per request. A call answered NOSCRIPT is sent
 * again with EVAL; a failed pipeline fails each of its calls. A turn with one call sends
 * it alone (the next profile showed ioredis's Pipeline object at ~2.5 % by itself).
 */
export function batchedLuaScript(source: string, args: readonly string[]) {
  const sha = createHash("sha1").update(source).digest("hex");
  type Call = { key: string; resolve: (v: unknown) => void; reject: (err: unknown) => void };
  const queues = new Map<RedisClient, Call[]>();
  const single = luaScript(source);
  const flush = (redis: RedisClient) => {
    const calls = queues.get(redis) ?? [];
    queues.delete(redis);
    // On a Redis Cluster a pipeline must stay on one server (ioredis refuses keys of
    // slots served by different masters): one pipeline per master, and a call whose
    // slot the client cannot place yet goes alone (ioredis routes it, following MOVED).
    const groups = new Map<string, Call[]>();
    for (const c of calls) {
      const group = serverGroupOf(redis, c.key);
      if (group === null) {
        void send(redis, [c]);
        continue;
      }
      let list = groups.get(group);
      if (!list) groups.set(group, (list = []));
      list.push(c);
    }
    for (const group of groups.values()) void send(redis, group);
  };
  const send = async (redis: RedisClient, calls: Call[]) => {
    // A lone call skips ioredis's Pipeline object, which costs more than the write it saves.
    if (calls.length === 1) {
      const c = calls[0] as Call;
      single(redis, [c.key], args).then(c.resolve, c.reject);
      return;
    }
    const pipeline = redis.pipeline();
    for (const c of calls) pipeline.evalsha(sha, 1, c.key, ...args);
    let results: [Error | null, unknown][];
    try {
      results = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
    } catch (err) {
      for (const c of calls) c.reject(err);
      return;
    }
    calls.forEach((c, i) => {
      const [err, value] = results[i] ?? [new Error("no reply from the pipeline"), undefined];
      if (!err) return c.resolve(value);
      if (!isNoScript(err)) return c.reject(err);
      redis.eval(source, 1, c.key, ...args).then(c.resolve, c.reject);
    });
  };
  return (redis: RedisClient, key: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      let calls = queues.get(redis);
      if (!calls) {
        calls = [];
        queues.set(redis, calls);
        setImmediate(() => flush(redis));
      }
      calls.push({ key, resolve, reject });
    });
}

const GCRA_ARGS = [String(1000 / LIMITS.requestsPerSecond), String(LIMITS.burst)] as const;
const gcra = batchedLuaScript(GCRA, GCRA_ARGS);
const windows = luaScript(WINDOWS);

/**
 * The public sandbox key's two windows for one caller network: the minute and the
 * UTC day. One script reads and bumps both, so they share a hash tag (one slot on
 * a Redis Cluster): `{<REDIS_PREFIX>:rl:sandbox:<network>}:m` and `...:d:<day>`.
 */
export function sandboxWindowKeys(redisPrefix: string, network: string, day: string): [string, string] {
  const tag = `{${redisPrefix}:rl:sandbox:${network}}`;
  return [`${tag}:m`, `${tag}:d:${day}`];
}

/**
 * Rate limits for authenticated requests, after the key is known and before any
 * other work. If Redis cannot answer, requests are let through (and logged): the
 * limiter protects capacity, it must not take the API down with it.
 */
export function rateLimit(deps: RateLimitDeps) {
  const prefix = `${deps.config.REDIS_PREFIX}:rl`;
  return async (req: Request, _res: Response, next: NextFunction) => {
    const caller = req.caller;
    if (!caller) return next();
    try {
      if (caller.isSandbox) {
        const now = deps.now();
        const ip = networkOf(req.ip);
        const [minute, day, ttl] = (await windows(deps.redis, sandboxWindowKeys(deps.config.REDIS_PREFIX, ip, utcDay(now)), [])) as [number, number, number];
        if (day > LIMITS.sandboxRequestsPerDay) {
          return next(new ApiError("rate_limited", { message: "The public sandbox key's daily limit for this address is reached.", retryAfterSeconds: secondsUntilUtcMidnight(now) }));
        }
        if (minute > LIMITS.sandboxRequestsPerMinute) {
          return next(new ApiError("rate_limited", { message: "The public sandbox key allows 30 requests a minute per address.", retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) }));
        }
        return next();
      }
      const waitMs = (await gcra(deps.redis, `${prefix}:key:${caller.keyId}`)) as number;
      if (waitMs > 0) return next(new ApiError("rate_limited", { message: "More than 10 requests a second (burst 20) with this key.", retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }));
      next();
    } catch (err) {
      req.log.warn({ err }, "rate limiter unavailable; request let through");
      next();
    }
  };
}
