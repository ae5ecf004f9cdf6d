#!/usr/bin/env node
// Runs the four built services side by side with prefixed output, prints where the
// API is and how to get a key, and stops them gracefully on Ctrl-C / SIGTERM. Each is
// started with @svc/fleet-harness (startProcess), as tests and bench scripts start them.
//
// Stopping: each service runs in a process group of its own (detached), so the
// terminal's Ctrl-C, which goes to the whole foreground group, reaches only this
// runner (and npm, when started by `npm run`). The runner then sends each service
// exactly one SIGTERM and waits for all of them to finish their work, at most
// SHUTDOWN_TIMEOUT_MS plus a margin; a service's second signal would cut its work
// short. `npm run` also passes the terminal's Ctrl-C on to us, so one Ctrl-C can
// arrive twice within moments: signals in the first second of a stop count as the
// same request. Ctrl-C again after that force-kills what is left.
import os from "node:os";
import path from "node:path";
import { GATEWAY_NODE_FLAGS, programScript, startProcess } from "@svc/fleet-harness";
import { DEFAULT_DATABASE_URL, ensureDotEnv, ROOT, serviceConnections } from "./lib.mjs";
import { SERVICES, settingOf } from "./service-settings.mjs";

ensureDotEnv();
const port = process.env.PORT ?? "8080";
const baseUrl = process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`;
// Locally, live vendor checks (whatsapp, signal.registered, number.hlr) go to the
// vendor simulator unless a real vendor is configured.
const runSimulator = !process.env.VENDOR_PRIMARY_URL;
if (runSimulator) {
  process.env.VENDOR_PRIMARY_URL = `http://127.0.0.1:${process.env.SIM_PORT ?? 9090}`;
  process.env.VENDOR_PRIMARY_KEY = process.env.SIM_API_KEY ?? "sim-key";
}
// One gateway process per core (at most 4) unless WEB_CONCURRENCY says otherwise.
process.env.WEB_CONCURRENCY ??= String(Math.min(4, os.availableParallelism()));
// Each service connects as itself: its own database role and Redis user (scripts/up.mjs made them).
const connections = serviceConnections();
const children = new Map();
let stopping = false;
let stopRequestedAt = 0;
let failed = false;
let announced = false;

const PROGRAMS = Object.fromEntries(SERVICES.map((name) => [name, [programScript(name)]]));
if (runSimulator) PROGRAMS["vendor-simulator"] = [programScript("vendor-simulator")];
// Dropping past months' partitions needs the tables' owner (DATABASE_URL's user); no service is that.
PROGRAMS["partition-upkeep"] = [path.join(ROOT, "scripts", "partition-upkeep.mjs"), "--every", "3600"];

// A child sees its own passwords only (in its URLs), never the other services' from .env.local.
const servicePasswords = SERVICES.flatMap((s) => [settingOf(s, "DATABASE_PASSWORD"), settingOf(s, "REDIS_PASSWORD")]);
const sharedEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !servicePasswords.includes(name)));

for (const [name, [script, ...args]] of Object.entries(PROGRAMS)) {
  const tag = `[${name}]`.padEnd(22);
  const child = await startProcess({
    name,
    script,
    args,
    nodeFlags: name === "gateway" ? GATEWAY_NODE_FLAGS : [],
    cwd: ROOT,
    env: { ...sharedEnv, ...connections[name], PORT: port },
    // A process group of its own: the terminal's Ctrl-C is not delivered to it (see the top).
    detached: true,
    keep: 0,
    onLine(line) {
      process.stdout.write(`${tag}${line}\n`);
      if (name === "gateway" && /gateway listening/.test(line)) announce();
    },
  });
  child.exit.then(({ code, signal }) => {
    children.delete(name);
    if (code !== 0) failed = true;
    if (!stopping) {
      process.stderr.write(`${tag}exited (${signal ?? code}); stopping the fleet\n`);
      stop();
    } else if (code !== 0) {
      process.stderr.write(`${tag}stopped with ${signal ?? `exit code ${code}`}\n`);
    }
    if (children.size === 0) {
      if (stopping) process.stdout.write(failed ? "The fleet stopped; not every service stopped cleanly (see above).\n" : "The fleet stopped.\n");
      process.exit(failed ? 1 : 0);
    }
  });
  children.set(name, child);
}

const customDatabase = Boolean(process.env.DATABASE_URL) && process.env.DATABASE_URL !== DEFAULT_DATABASE_URL;

/** What the banner says of live e-mail checks: they need the probe's public name to run at all. */
function emailRoute() {
  const helo = process.env.SMTP_HELO_NAME;
  return helo
    ? `Live e-mail checks probe mail servers as ${helo} (docs/check-quality.md).`
    : "Live e-mail checks need SMTP_HELO_NAME (see README); until then they answer 503.";
}

function announce() {
  // Every gateway process (WEB_CONCURRENCY) says it listens; one announcement is enough.
  if (announced) return;
  announced = true;
  process.stdout.write(`
  The fleet is up.
    API base URL:  ${baseUrl}/v1        (OpenAPI: ${baseUrl}/v1/openapi.json)
    Get a key:     public sandbox key  svc_test_publicSandboxDemoKey2026v1AbCd4QUfHJ
                   personal test key   open ${baseUrl}/get-test-key
                   operator            npm run admin -- account create --name Acme --balance 25
                                       npm run admin -- key create --account <acct_id> --mode test
    Try:           curl -s ${baseUrl}/v1/lookup -H "Authorization: Bearer <key>" -H "Content-Type: application/json" \\
                     -d '{"numbers":["+12025550101"],"checks":["spam"]}'
  Live vendor checks go to ${runSimulator ? "the local vendor simulator (set VENDOR_PRIMARY_URL for a real vendor)" : process.env.VENDOR_PRIMARY_URL}.
  ${emailRoute()}
  Ctrl-C stops all services gracefully (each finishes its work first).
${customDatabase ? "  This fleet uses the DATABASE_URL of this shell: set the same one before `npm run admin` in another shell\n  (.env.local holds secrets only; without DATABASE_URL the admin CLI uses the default database).\n" : ""}`);
}

// Each service's own shutdown deadline, plus a margin for its start and exit.
const STOP_GRACE_MS = Number(process.env.SHUTDOWN_TIMEOUT_MS ?? 25_000) + 5_000;
// One Ctrl-C under `npm run` arrives twice (the terminal's and npm's copy) within moments.
const SAME_REQUEST_MS = 1_000;

/** Sends every service one SIGTERM; force-kills what is left after STOP_GRACE_MS. */
function stop() {
  if (stopping) return;
  stopping = true;
  stopRequestedAt = Date.now();
  process.stdout.write(`\n==> Stopping the fleet: each service finishes its work (at most ${Math.round(STOP_GRACE_MS / 1000)} s). Ctrl-C again to force.\n`);
  for (const child of children.values()) child.terminate();
  setTimeout(() => {
    process.stderr.write(`Services still running after ${Math.round(STOP_GRACE_MS / 1000)} s: ${[...children.keys()].join(", ")}; killing them.\n`);
    forceKill(1);
  }, STOP_GRACE_MS).unref();
}

/** SIGKILL to each service's whole process group (the gateway's cluster processes too). */
function forceKill(code) {
  for (const child of children.values()) child.kill("SIGKILL", { group: true });
  process.exit(code);
}

function onSignal(signal) {
  if (!stopping) return stop();
  if (Date.now() - stopRequestedAt < SAME_REQUEST_MS) return;
  process.stderr.write(`${signal} again: killing the services now (work in flight is cut short and picked up on the next start).\n`);
  forceKill(130);
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
// The terminal closing: the services, in groups of their own, would not hear of it.
process.on("SIGHUP", onSignal);
// With the terminal gone, writing to it fails; the runner must outlive that to see the stop through.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
// Detached services outlive a runner that dies: whatever ends it, they are told to stop
// (once: a service already sent its SIGTERM is finishing its work, and a second would cut that short).
process.on("exit", () => {
  for (const child of children.values()) child.terminate();
});
