// A worker thread of the parse ceiling (bench/lib/ceilings.mjs): parses its share of
// the numbers with libphonenumber-js/max, the import packages/domain uses
// (parsePhoneNumberFromString + isValid, what parseNumber does without the line type).
// One warm-up pass on start, then one timed pass per "go" message. With
// workerData.schedIdle the thread first moves itself to SCHED_IDLE with `chrt`, as
// the gateway's intake threads do (services/gateway/src/bulk/intake-worker.ts).
import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";

const require = createRequire(workerData.domainPackage);
const { parsePhoneNumberFromString } = require("libphonenumber-js/max");
const numbers = workerData.numbers;
let priority = "normal";
if (workerData.schedIdle) {
  try {
    execFileSync("chrt", ["--idle", "--pid", "0", readlinkSync("/proc/thread-self").split("/").pop()], { stdio: "ignore", timeout: 2_000 });
    priority = "idle";
  } catch {
    priority = "normal (chrt failed)";
  }
}

function pass() {
  let valid = 0;
  for (const n of numbers) if (parsePhoneNumberFromString(n)?.isValid()) valid += 1;
  return valid;
}

const t0 = performance.now();
pass();
parentPort.postMessage({ ready: true, cold_ms: performance.now() - t0, priority });
parentPort.on("message", (m) => {
  if (m === "stop") process.exit(0);
  const t = performance.now();
  const valid = pass();
  parentPort.postMessage({ ms: performance.now() - t, valid });
});
