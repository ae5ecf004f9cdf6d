import { createHash } from "node:crypto";
import { QUEUES, type QueueName } from "./catalog";
import { queuePrefix } from "./keys";

/**
 * Least privilege in Redis: one ACL user per service, allowed only the keys and
 * channels of its fleet that it uses, and only the commands BullMQ, the notices and
 * the limiters need — no FLUSHALL, KEYS, CONFIG, MONITOR, DEBUG, ACL, SCRIPT FLUSH.
 * `scripts/redis-acl.mjs` writes these as an ACL file (compose, operators' Redis)
 * or applies them with ACL SETUSER (`npm run up`, the tests). docs/security.md
 * describes the same table for people.
 *
 * Users are named after the fleet's prefix (`svc-gateway` for REDIS_PREFIX `svc`),
 * so fleets sharing a Redis server each have their own.
 */
export const REDIS_SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const;
export type RedisService = (typeof REDIS_SERVICES)[number];

/** Which queues each service sends to or takes from. */
const QUEUES_OF: Record<RedisService, readonly QueueName[]> = {
  // Sends to all three (lookups, chunks, settlements of cache-answered lookups, events);
  // its operator-only queue dashboard shows them all.
  gateway: [QUEUES.checks, QUEUES.settlements, QUEUES.webhooks],
  "check-worker": [QUEUES.checks, QUEUES.settlements, QUEUES.webhooks],
  "billing-ledger": [QUEUES.settlements, QUEUES.webhooks],
  "webhook-dispatcher": [QUEUES.webhooks],
};

/**
 * The commands every service may run: every command but the dangerous and
 * administrative ones (FLUSHALL, KEYS, CONFIG, ACL, MONITOR, DEBUG, SHUTDOWN, CLIENT
 * LIST/KILL, ...), and not SCRIPT FLUSH/KILL or FUNCTION; INFO (BullMQ reads the
 * server's version) and the cluster topology reads ioredis needs are given back.
 * Not a list of categories to allow: a script's command outside them (the rate
 * limiter's TIME, say) would fail, and the limiter lets requests through when Redis
 * fails — quietly unlimited. Keys and channels are what the patterns narrow.
 */
const COMMANDS = [
  "+@all",
  "-@dangerous",
  "-@admin",
  // Names of keys and channels beyond a user's patterns (other fleets' too): nothing here lists them.
  "-scan",
  "-randomkey",
  "-pubsub",
  "-script|flush",
  "-script|kill",
  "-function",
  "+info",
  "+client|setname",
  "+client|id",
  "+cluster|slots",
  "+cluster|shards",
  "+cluster|nodes",
  "+cluster|info",
  "+readonly",
  "+readwrite",
].join(" ");

/**
 * The ACL rules (after the user's name) for `service` of the fleet whose keys start
 * with `prefix` — a REDIS_PREFIX, or a glob of several (tests: `t:<run>:*`).
 */
export function redisAclRules(service: RedisService, prefix: string): string {
  const keys = QUEUES_OF[service].map((q) => `~${queuePrefix(prefix, q)}:*`);
  const channels: string[] = [];
  const sources = `{${prefix}:sources}:*`;
  if (service === "gateway") {
    // Rate limits, sandbox windows, test-key sign-up, the daily e-mail guard; routes and breakers read only.
    keys.push(`~${prefix}:rl:*`, `~{${prefix}:rl:*`, `~${prefix}:testkeys:*`, `~{${prefix}:enum:*`, `%R~${sources}`);
    channels.push(`&${prefix}:completed:*`);
  }
  if (service === "check-worker") {
    keys.push(`~${sources}`);
    channels.push(`&${prefix}:completed:*`);
  }
  return ["resetkeys", "resetchannels", ...keys, ...channels, COMMANDS].join(" ");
}

/** The ACL user name of `service` (or the operator's, `admin`) in the fleet of `prefix`. */
export function redisUserName(prefix: string, service: RedisService | "admin"): string {
  return `${prefix}-${service}`;
}

/** The operator's user (`<prefix>-admin`): every right, for people and health checks, never a service. */
export const ADMIN_ACL_RULES = "~* &* +@all";

/** A user's definition after its name: reset, on, its password as a SHA-256 hash (never the password itself), its rules. */
function userDefinition(password: string, rules: string): string[] {
  return ["reset", "on", `#${createHash("sha256").update(password).digest("hex")}`, ...rules.split(" ")];
}

/** One line of an ACL file (`aclfile`) for `service`, or for the operator (`admin`). */
export function aclFileLine(service: RedisService | "admin", prefix: string, password: string): string {
  return ["user", redisUserName(prefix, service), ...userDefinition(password, service === "admin" ? ADMIN_ACL_RULES : redisAclRules(service, prefix))].join(" ");
}

/** The ACL SETUSER arguments that make the same user on a running server. */
export function aclSetUserArgs(service: RedisService | "admin", prefix: string, password: string, name = redisUserName(prefix, service)): string[] {
  return ["SETUSER", name, ...userDefinition(password, service === "admin" ? ADMIN_ACL_RULES : redisAclRules(service, prefix))];
}
