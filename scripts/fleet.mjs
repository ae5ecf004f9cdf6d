#!/usr/bin/env node
// Runs the four built services side by side with prefixed output, prints where the
// API is and how to get a key, and passes Ctrl-C / SIGTERM on for a graceful stop.
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { ensureDotEnv, ROOT } from "./lib.mjs";

ensureDotEnv();
const port = process.env.PORT ?? "8080";
const baseUrl = process.env.PUBLIC_BASE_URL ?? `http://localhost:${port}`;
const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"];
// Locally, live vendor checks (whatsapp, signal.registered, number.hlr) go to the
// vendor simulator unless a real vendor is configured.
const runSimulator = !process.env.VENDOR_PRIMARY_URL;
if (runSimulator) {
  process.env.VENDOR_PRIMARY_URL = `http://127.0.0.1:${process.env.SIM_PORT ?? 9090}`;
  process.env.VENDOR_PRIMARY_KEY = process.env.SIM_API_KEY ?? "sim-key";
}
// One gateway process per core (at most 4) unless WEB_CONCURRENCY says otherwise.
process.env.WEB_CONCURRENCY ??= String(Math.min(4, os.availableParallelism()));
const children = new Map();
let stopping = false;

const PROGRAMS = Object.fromEntries(SERVICES.map((name) => [name, path.join("services", name, "dist", "main.js")]));
if (runSimulator) PROGRAMS["vendor-simulator"] = path.join("packages", "vendor-simulator", "dist", "main.js");

for (const [name, program] of Object.entries(PROGRAMS)) {
  // The gateway's node flags: see GATEWAY_NODE_FLAGS in services/gateway/src/main.ts.
  const flags = name === "gateway" ? ["--v8-pool-size=1"] : [];
  const child = spawn(process.execPath, [...flags, path.join(ROOT, program)], {
    cwd: ROOT,
    env: { ...process.env, PORT: port },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tag = `[${name}]`.padEnd(22);
  for (const stream of [child.stdout, child.stderr]) {
    let buffered = "";
    stream.on("data", (chunk) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop();
      for (const line of lines) process.stdout.write(`${tag}${line}\n`);
      if (name === "gateway" && /gateway listening/.test(chunk.toString())) announce();
    });
  }
  child.on("exit", (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`${tag}exited (${signal ?? code}); stopping the fleet\n`);
      stop("SIGTERM");
    }
    if (children.size === 0) process.exit(stopping ? 0 : 1);
  });
  children.set(name, child);
}

function announce() {
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
  Live e-mail checks need SMTP_HELO_NAME (see README); until then they answer 503.
  Ctrl-C stops all services gracefully.
`);
}

function stop(signal) {
  if (stopping) return;
  stopping = true;
  for (const child of children.values()) child.kill(signal);
}
process.on("SIGINT", () => stop("SIGTERM"));
process.on("SIGTERM", () => stop("SIGTERM"));
