#!/usr/bin/env node
// `npm run up`: install, build, create and migrate the database, start all four
// services on the local Postgres and Redis. DATABASE_URL, REDIS_URL and PORT
// override the defaults.
import { build, ensureDotEnv, installIfNeeded, run, step } from "./lib.mjs";

installIfNeeded();
ensureDotEnv();
build();

step("Preparing the database");
run(process.execPath, ["scripts/ensure-database.mjs"]);
run(process.execPath, ["scripts/prisma.mjs", "migrate", "deploy"]);

step("Starting the fleet");
await import("./fleet.mjs");
