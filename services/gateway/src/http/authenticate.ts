import type { NextFunction, Request, Response } from "express";
import { ApiError } from "@svc/contract";
import { addressAllowed, hashApiKey, parseApiKey, sameKeyHash, type Scope } from "@svc/domain";
import { findKeyByHash } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";

/** What resolving a key reads: the secret, the caches of keys, the database, the clock. */
export type AuthDeps = Pick<Deps, "config" | "caches" | "store" | "now">;

const BEARER = /^Bearer ([!-~]{1,200})$/i;
const QUERY_KEY_NAMES = /^(api[_-]?key|key|token|access[_-]?token|authorization)$/i;

/** One body for every authentication failure, so none of them can be told apart. */
export const unauthorized = () => new ApiError("unauthorized", { headers: { "WWW-Authenticate": 'Bearer realm="api"' } });

/** True when the query string carries something that looks like a key. */
function keyInQuery(req: Request): boolean {
  const raw = req.originalUrl.indexOf("?");
  if (raw < 0) return false;
  const params = new URLSearchParams(req.originalUrl.slice(raw + 1));
  for (const [name, value] of params) if (QUERY_KEY_NAMES.test(name) || /svc_(test|live|agent)_/.test(value)) return true;
  return false;
}

/**
 * Resolves the caller from `Authorization: Bearer`. Missing, malformed, unknown,
 * revoked and expired keys and callers outside the allowlist all get the same 401.
 * Shape and checksum are checked before any database work.
 *
 * Keys with a valid checksum are easy to forge, so a key that is neither cached nor
 * in the process's set of live keys (cache/live-keys.ts) is refused without a
 * query; a small per-process budget of database confirmations covers a key whose
 * creation is still being announced. Nothing here is counted per network: a real
 * key is never refused because others sent forged ones from the same address.
 * When the set cannot be trusted (not loaded yet, listener down), the database decides.
 */
export async function resolveCaller(deps: AuthDeps, req: Request): Promise<Caller> {
  if (keyInQuery(req)) throw unauthorized();
  const header = req.headers.authorization;
  const match = header ? BEARER.exec(header) : null;
  if (!match) throw unauthorized();
  const key = match[1] as string;
  if (!parseApiKey(key)) throw unauthorized();
  const hash = hashApiKey(deps.config.KEY_HASH_SECRET, key);
  const cacheKey = hash.toString("hex");
  let record = deps.caches.keys.get(cacheKey) ?? null;
  if (!record) {
    const live = deps.caches.liveKeys;
    if (live.mightExist(hash) === false && !live.takeMissConfirmation()) throw unauthorized();
    record = await findKeyByHash(deps.store.pool, hash);
    if (record) deps.caches.keys.set(cacheKey, record);
  }
  const now = deps.now();
  if (!record || !sameKeyHash(record.key_hash, hash) || record.revoked_at || (record.expires_at && record.expires_at <= now)) throw unauthorized();
  if (!addressAllowed(req.ip, record.allow_ips)) throw unauthorized();
  // An account that requires allowlists (switched on after its keys were made, say)
  // refuses its live and agent keys that have none.
  if (record.require_ip_allowlist && record.mode !== "test" && record.allow_ips.length === 0) throw unauthorized();
  return {
    keyId: record.id,
    accountId: record.account_id,
    mode: record.mode,
    livemode: record.mode !== "test",
    isSandbox: record.is_sandbox,
    scopes: record.scopes,
    realtimeEnabled: record.realtime_enabled,
    retentionDays: record.retention_days,
    dailySpendCapMicros: record.daily_spend_cap_micros,
  };
}

export function requireScope(caller: Caller, scopes: readonly Scope[]): void {
  if (!scopes.some((s) => caller.scopes.includes(s))) {
    throw new ApiError("insufficient_scope", { message: `The API key does not have the scope this endpoint needs (${scopes.join(" or ")}).` });
  }
}

/** Middleware form, for routes that need a key. `optional` lets key-less requests through. */
export function authenticate(deps: AuthDeps, mode: "key" | "optional") {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      if (mode === "optional" && !req.headers.authorization && !keyInQuery(req)) return next();
      req.caller = await resolveCaller(deps, req);
      next();
    } catch (err) {
      next(err);
    }
  };
}
