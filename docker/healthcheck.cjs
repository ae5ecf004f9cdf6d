// The image's HEALTHCHECK (docker run, docker compose; Kubernetes uses its own
// probes). Healthy = this container's service answers 200 on its own /readyz: its
// Postgres and Redis answer and it is consuming (or, for the gateway, accepting).
//
// Which service: the one PID 1's command runs (under tini, /proc/1/cmdline is
// `tini -- node … services/<name>/dist/main.js`), or HEALTHCHECK_SERVICE when PID 1
// is not the service (e.g. `docker run --pid=host`). Nothing found: unhealthy, never
// a guess. Which port: METRICS_PORT when set, else that service's default (gateway
// 9464, check-worker 9465, billing-ledger 9466, webhook-dispatcher 9467), and only
// that one. Whose answer: the operations port names its service in the Svc-Service
// header; an answer from another service (under host networking another fleet's
// service may hold this port) or from something else is not this one being healthy.
// METRICS_PORT=0 turns the operations port off, and with it this check (exit 0).
"use strict";

const { readFileSync } = require("node:fs");

/** Each service's operations port when METRICS_PORT is not set (the services' own defaults). */
const DEFAULT_PORTS = { gateway: 9464, "check-worker": 9465, "billing-ledger": 9466, "webhook-dispatcher": 9467 };
/** Set by the operations port on every answer (packages/metrics/src/ops-server.ts). */
const SERVICE_HEADER = "svc-service";

/** The one service a command line runs (an argument naming services/<name>/dist/main.js), or null. */
function serviceOfCommand(args) {
  const found = new Set();
  for (const arg of args) {
    const m = /(?:^|[\s/])services\/([a-z0-9-]+)\/dist\/main\.js$/.exec(arg);
    if (m && Object.hasOwn(DEFAULT_PORTS, m[1])) found.add(m[1]);
  }
  return found.size === 1 ? [...found][0] : null;
}

/** { service } this container runs, or { error } saying why it cannot tell. */
function ownService(env = process.env, cmdlineFile = "/proc/1/cmdline") {
  const named = env.HEALTHCHECK_SERVICE;
  if (named) {
    return Object.hasOwn(DEFAULT_PORTS, named)
      ? { service: named }
      : { error: `HEALTHCHECK_SERVICE=${named} is none of ${Object.keys(DEFAULT_PORTS).join(", ")}` };
  }
  let args;
  try {
    args = readFileSync(cmdlineFile, "utf8").split("\0").filter(Boolean);
  } catch (err) {
    return { error: `cannot read ${cmdlineFile} (${err.code || err.message}); set HEALTHCHECK_SERVICE` };
  }
  const service = serviceOfCommand(args);
  return service
    ? { service }
    : { error: `PID 1 (${args.slice(0, 6).join(" ")}) runs no single fleet service (services/<name>/dist/main.js); set HEALTHCHECK_SERVICE` };
}

/** Probes `service`'s /readyz; resolves { healthy, message }. */
async function check(service, { port, host = "127.0.0.1", timeoutMs = 2000 }) {
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}/readyz`;
  let res;
  let body;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    body = await res.text();
  } catch (err) {
    return { healthy: false, message: `${service}: nothing answers on ${host}:${port} (${err?.cause?.code || err?.name || String(err)})` };
  }
  const answeredBy = res.headers.get(SERVICE_HEADER);
  if (answeredBy !== service) {
    return {
      healthy: false,
      message: answeredBy
        ? `${service}: port ${port} is answered by ${answeredBy}, not by ${service}`
        : `${service}: port ${port} is answered by something that is not a fleet service (no ${SERVICE_HEADER} header)`,
    };
  }
  if (res.status !== 200) {
    let state = "";
    try {
      state = JSON.parse(body).status ?? "";
    } catch {
      // not JSON: the status code says enough
    }
    return { healthy: false, message: `${service}: not ready (${res.status}${state ? ` ${state}` : ""})` };
  }
  return { healthy: true, message: `${service}: ready` };
}

/** Wildcard addresses are reached through loopback; a specific METRICS_HOST is probed as it is. */
function probeHost(env) {
  if (env.HEALTHCHECK_HOST) return env.HEALTHCHECK_HOST;
  const h = env.METRICS_HOST;
  return !h || h === "0.0.0.0" || h === "::" ? "127.0.0.1" : h;
}

async function main(env = process.env) {
  if (env.METRICS_PORT === "0") {
    console.log("healthcheck: METRICS_PORT=0 (operations port off), nothing to check");
    return 0;
  }
  const own = ownService(env);
  if (own.error) {
    console.log(`healthcheck: cannot tell which service this container runs: ${own.error}`);
    return 1;
  }
  const port = env.METRICS_PORT ? Number(env.METRICS_PORT) : DEFAULT_PORTS[own.service];
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.log(`healthcheck: METRICS_PORT=${env.METRICS_PORT} is not a port`);
    return 1;
  }
  const result = await check(own.service, { port, host: probeHost(env), timeoutMs: Number(env.HEALTHCHECK_TIMEOUT_MS || 2000) });
  if (!result.healthy) console.log(`healthcheck: ${result.message}`);
  return result.healthy ? 0 : 1;
}

module.exports = { DEFAULT_PORTS, serviceOfCommand, ownService, check, main };

if (require.main === module) main().then((code) => process.exit(code), () => process.exit(1));
