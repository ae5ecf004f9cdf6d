#!/usr/bin/env node
// `npm run up`: install, build, create and migrate the database, give each service
// its own database role and Redis user, start all four services on the local Postgres
// and Redis. DATABASE_URL (the schema owner), REDIS_URL (a user that may run ACL
// SETUSER), REDIS_PREFIX and PORT override the defaults.
import { build, ensureDotEnv, installIfNeeded, run, serviceCredentialSettings, step } from "./lib.mjs";

installIfNeeded();
ensureDotEnv();
build();

step("Preparing the database and Redis");
run(process.execPath, ["scripts/ensure-database.mjs"]);
const credentials = { env: { ...process.env, ...serviceCredentialSettings() } };
run(process.execPath, ["scripts/db-deploy.mjs"], credentials);
run(process.execPath, ["scripts/redis-acl.mjs", "--apply"], credentials);

step("Starting the fleet");
await import("./fleet.mjs");
