import type { NextFunction, Request, Response } from "express";
import { ApiError, LIMITS } from "@svc/contract";
import { networkOf } from "@svc/domain";
import type { Deps } from "../context";
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
const WINDOWS = `
local minute = redis.call('INCR', KEYS[1])
if minute == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end
local day = redis.call('INCR', KEYS[2])
if day == 1 then redis.call('EXPIRE', KEYS[2], 172800) end
local ttl = redis.call('PTTL', KEYS[1])
return {minute, day, ttl}`;

/**
 * Rate limits for authenticated requests, after the key is known and before any
 * other work. If Redis cannot answer, requests are let through (and logged): the
 * limiter protects capacity, it must not take the API down with it.
 */
export function rateLimit(deps: Deps) {
  const prefix = `${deps.config.REDIS_PREFIX}:rl`;
  return async (req: Request, _res: Response, next: NextFunction) => {
    const caller = req.caller;
    if (!caller) return next();
    try {
      if (caller.isSandbox) {
        const now = deps.now();
        const ip = networkOf(req.ip);
        const [minute, day, ttl] = (await deps.redis.eval(WINDOWS, 2, `${prefix}:sandbox:m:${ip}`, `${prefix}:sandbox:d:${utcDay(now)}:${ip}`)) as [number, number, number];
        if (day > LIMITS.sandboxRequestsPerDay) {
          return next(new ApiError("rate_limited", { message: "The public sandbox key's daily limit for this address is reached.", retryAfterSeconds: secondsUntilUtcMidnight(now) }));
        }
        if (minute > LIMITS.sandboxRequestsPerMinute) {
          return next(new ApiError("rate_limited", { message: "The public sandbox key allows 30 requests a minute per address.", retryAfterSeconds: Math.max(1, Math.ceil(ttl / 1000)) }));
        }
        return next();
      }
      const waitMs = (await deps.redis.eval(GCRA, 1, `${prefix}:key:${caller.keyId}`, String(1000 / LIMITS.requestsPerSecond), String(LIMITS.burst))) as number;
      if (waitMs > 0) return next(new ApiError("rate_limited", { message: "More than 10 requests a second (burst 20) with this key.", retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }));
      next();
    } catch (err) {
      req.log.warn({ err }, "rate limiter unavailable; request let through");
      next();
    }
  };
}
