#!/usr/bin/env node
// Deploys the database: applies the committed migrations (`prisma migrate deploy`,
// through scripts/prisma.mjs), then gives each service its own login role with only
// the grants it needs (packages/store/src/roles.ts; docs/security.md). Run by
// `npm run up`, compose's `migrate` one-shot and the Kubernetes migration Job.
//
//   DATABASE_URL                      the schema owner (runs the migrations; needs CREATEROLE)
//   GATEWAY_DATABASE_URL              each service's own DATABASE_URL: its role is created
//   CHECK_WORKER_DATABASE_URL         (or altered) with that user name and password. Unset:
//   BILLING_LEDGER_DATABASE_URL       the default role name (svc_gateway, ...) and no
//   WEBHOOK_DISPATCHER_DATABASE_URL   password change — refused when NODE_ENV=production.
//
// Signals (Ctrl-C, a stopped container or Job) are passed on to the migration: the one
// in progress is rolled back, and the next run recovers it and carries on
// (scripts/prisma.mjs; docs/operations.md). Passwords are never printed.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { settingOf } from "./service-settings.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { applyServiceRoles, DEFAULT_SERVICE_ROLES, SERVICES } = require("../packages/store/dist/roles.js");

const ownerUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/svc_validate";

/** Each service's role and password from its URL (the database part must be the owner's). */
function serviceLogins() {
  const database = new URL(ownerUrl).pathname;
  const logins = {};
  for (const service of SERVICES) {
    const setting = settingOf(service, "DATABASE_URL");
    const value = process.env[setting];
    if (!value) {
      if (process.env.NODE_ENV === "production") fail(`${setting} is not set: each service needs its own database role and password in production`);
      logins[service] = { role: DEFAULT_SERVICE_ROLES[service] };
      continue;
    }
    let url;
    try {
      url = new URL(value);
    } catch {
      fail(`${setting} is not a postgresql:// URL`);
    }
    if (!/^postgres(ql)?:$/.test(url.protocol) || !url.username) fail(`${setting} must be a postgresql:// URL with a user name`);
    if (url.pathname !== database) fail(`${setting} names another database than DATABASE_URL`);
    logins[service] = { role: decodeURIComponent(url.username), ...(url.password ? { password: decodeURIComponent(url.password) } : {}) };
  }
  return logins;
}

function fail(message) {
  process.stderr.write(`db-deploy: ${message}\n`);
  process.exit(1);
}

/** `prisma migrate deploy` as a child that gets our signals; resolves with its exit code. */
function migrate() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts", "prisma.mjs"), "migrate", "deploy"], { cwd: ROOT, stdio: "inherit", env: { ...process.env, DATABASE_URL: ownerUrl } });
    const pass = (signal) => child.kill(signal);
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, pass);
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + (signal === "SIGINT" ? 2 : 15) : 1)));
  });
}

const logins = serviceLogins();
const code = await migrate();
if (code !== 0) process.exit(code);

const client = new pg.Client({ connectionString: ownerUrl });
try {
  await client.connect();
  await applyServiceRoles(client, logins);
} catch (err) {
  fail(`could not apply the services' roles: ${err.message}`);
} finally {
  await client.end().catch(() => undefined);
}
process.stdout.write(`Database roles: ${SERVICES.map((s) => `${s} → ${logins[s].role}`).join(", ")} (grants: docs/security.md).\n`);
