#!/usr/bin/env node
// Each service's Redis ACL user (packages/queues/src/acl.ts; docs/security.md):
// only its fleet's keys and channels that it uses, no dangerous commands.
//
//   node scripts/redis-acl.mjs [--out FILE]   an ACL file (`aclfile` in redis.conf): the
//                                             users with SHA-256 password hashes, and the
//                                             default user off (stdout without --out)
//   node scripts/redis-acl.mjs --apply        the same users on the running Redis at
//                                             REDIS_URL (every node of a cluster), with
//                                             ACL SETUSER as REDIS_URL's user; the
//                                             default user is left as it is
//
// Settings: REDIS_PREFIX (default svc; users are <prefix>-gateway, ...),
// GATEWAY_REDIS_PASSWORD, CHECK_WORKER_REDIS_PASSWORD, BILLING_LEDGER_REDIS_PASSWORD,
// WEBHOOK_DISPATCHER_REDIS_PASSWORD (required, 16+ characters), ADMIN_REDIS_PASSWORD
// (optional: a <prefix>-admin user with every right, for operators and health checks).
// Passwords are never printed.
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { settingOf } from "./service-settings.mjs";

const require = createRequire(import.meta.url);
const { aclFileLine, aclSetUserArgs, REDIS_SERVICES, redisUserName, createRedis, waitForRedis, isCluster } = require("../packages/queues/dist/index.js");

const { values } = parseArgs({ options: { out: { type: "string" }, apply: { type: "boolean", default: false } } });
const prefix = process.env.REDIS_PREFIX || "svc";
if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) fail("REDIS_PREFIX may hold only letters, digits and _ . : -");

function password(setting, required = true) {
  const value = process.env[setting];
  if (!value) {
    if (required) fail(`${setting} is not set`);
    return undefined;
  }
  if (value.length < 16) fail(`${setting} must be at least 16 characters`);
  return value;
}

function fail(message) {
  process.stderr.write(`redis-acl: ${message}\n`);
  process.exit(1);
}

const services = REDIS_SERVICES.map((service) => ({ service, password: password(settingOf(service, "REDIS_PASSWORD")) }));
const admin = password("ADMIN_REDIS_PASSWORD", false);

if (!values.apply) {
  // An ACL file has no comments: what it is and where it comes from is in docs/security.md.
  const lines = [
    "user default off resetkeys resetchannels -@all",
    ...services.map(({ service, password }) => aclFileLine(service, prefix, password)),
    ...(admin ? [aclFileLine("admin", prefix, admin)] : []),
  ];
  const text = `${lines.join("\n")}\n`;
  if (values.out) writeFileSync(values.out, text, { mode: 0o644 });
  else process.stdout.write(text);
  process.exit(0);
}

// --apply: on every node (ACL rules are not replicated between a cluster's nodes).
const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "producer", "redis-acl");
try {
  await waitForRedis(redis);
  const nodes = isCluster(redis) ? redis.nodes("all") : [redis];
  for (const node of nodes) {
    for (const { service, password } of services) await node.call("ACL", ...aclSetUserArgs(service, prefix, password));
    if (admin) await node.call("ACL", ...aclSetUserArgs("admin", prefix, admin));
  }
  process.stdout.write(`Redis users: ${REDIS_SERVICES.map((s) => redisUserName(prefix, s)).join(", ")}${admin ? `, ${prefix}-admin` : ""} (on ${nodes.length} node${nodes.length === 1 ? "" : "s"}).\n`);
} catch (err) {
  fail(`could not apply the users: ${err.message}`);
} finally {
  redis.disconnect();
}
