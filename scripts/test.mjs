#!/usr/bin/env node
// `npm test`: the whole suite on a fresh clone — install if needed (npm packages, and
// Debian's Chromium for the browser tests), build (fleet tests run the built services as
// real processes), then jest against the local Postgres and Redis, then the fleet tests
// once more on a local Redis Cluster (scripts/test-cluster.mjs; needs redis-server and
// redis-cli). Extra arguments go to jest and run that selection once, on the one Redis.
import { build, ensureChromium, installIfNeeded, run, step } from "./lib.mjs";

installIfNeeded();
const chromium = ensureChromium();
build();
step("Running the test suite (jest)");
run(process.execPath, ["node_modules/jest/bin/jest.js", ...process.argv.slice(2)], { env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", CHROMIUM_PATH: chromium } });
if (process.argv.length <= 2) run(process.execPath, ["scripts/test-cluster.mjs"], { env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", CHROMIUM_PATH: chromium } });
