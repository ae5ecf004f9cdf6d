import { ApiError } from "@svc/contract";
import { DAILY_FAMILY_EMAILS_LIMIT } from "@svc/domain";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { utcDay } from "../time";
import type { EmailFamily } from "./prepare";

/**
 * Live keys: 50 or more addresses of one family (domain + local part without
 * digits and separators) from one account in one UTC day is enumeration. Families
 * are Redis sets of address digests keyed with a server secret (no address, nor
 * anything a list of likely addresses could be matched against); the check and the add
 * happen in one script, so concurrent requests cannot slip past the limit together.
 */
const SCRIPT = `
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local pos = 3
for i, key in ipairs(KEYS) do
  local n = tonumber(ARGV[pos]); pos = pos + 1
  local fresh = 0
  for j = 1, n do
    if redis.call('SISMEMBER', key, ARGV[pos + j - 1]) == 0 then fresh = fresh + 1 end
  end
  if redis.call('SCARD', key) + fresh >= limit then return i end
  pos = pos + n
end
pos = 3
for i, key in ipairs(KEYS) do
  local n = tonumber(ARGV[pos]); pos = pos + 1
  for j = 1, n do redis.call('SADD', key, ARGV[pos + j - 1]) end
  redis.call('EXPIRE', key, ttl)
  pos = pos + n
end
return 0`;

/**
 * One family's set for one account and UTC day. The script reads and adds to every
 * family of a request at once, so an account's families of a day share a hash tag
 * (one slot on a Redis Cluster): `{<REDIS_PREFIX>:enum:<account>:<day>}:<family>`.
 */
export function emailFamilyKey(redisPrefix: string, accountId: string, day: string, family: string): string {
  return `{${redisPrefix}:enum:${accountId}:${day}}:${family}`;
}

/** `families` hold keyed digests (prepareRequest with the CACHE_HASH_SECRET digest). */
export async function guardDailyEmailFamilies(deps: Pick<Deps, "now" | "config" | "redis">, caller: Pick<Caller, "accountId">, families: readonly EmailFamily[]): Promise<void> {
  if (families.length === 0) return;
  const day = utcDay(deps.now());
  const keys: string[] = [];
  const args: string[] = [String(DAILY_FAMILY_EMAILS_LIMIT), String(2 * 86_400)];
  for (const [family, members] of families) {
    keys.push(emailFamilyKey(deps.config.REDIS_PREFIX, caller.accountId, day, family));
    args.push(String(members.length), ...members);
  }
  const blocked = (await deps.redis.eval(SCRIPT, keys.length, ...keys, ...args)) as number;
  if (blocked !== 0) {
    throw new ApiError("suspected_enumeration", {
      param: "emails",
      message: "Too many addresses on one domain that differ only by digits or separators were checked today.",
    });
  }
}
