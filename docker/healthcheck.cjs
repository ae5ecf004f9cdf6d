// The image's HEALTHCHECK (docker run, docker compose; Kubernetes uses its own
// probes). Healthy = the service's /readyz on its operations port answers 200:
// its Postgres and Redis answer and it is consuming (or, for the gateway, accepting).
//
// The port is METRICS_PORT when set; otherwise each service's default is tried in
// turn (gateway 9464, check-worker 9465, billing-ledger 9466, webhook-dispatcher
// 9467): a container has its own network namespace, so only its own service answers.
// METRICS_PORT=0 turns the operations port off, and with it this check (exit 0).
"use strict";

const DEFAULT_PORTS = [9464, 9465, 9466, 9467];
const TIMEOUT_MS = Number(process.env.HEALTHCHECK_TIMEOUT_MS || 2000);
const host = process.env.HEALTHCHECK_HOST || "127.0.0.1";

async function probe(port) {
  try {
    const res = await fetch(`http://${host}:${port}/readyz`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await res.arrayBuffer();
    return { port, status: res.status };
  } catch (err) {
    return { port, error: err?.cause?.code || err?.name || String(err) };
  }
}

async function main() {
  const configured = process.env.METRICS_PORT;
  if (configured === "0") {
    console.log("healthcheck: METRICS_PORT=0 (operations port off), nothing to check");
    return 0;
  }
  const ports = configured ? [Number(configured)] : DEFAULT_PORTS;
  const results = [];
  for (const port of ports) {
    const result = await probe(port);
    if (result.status === 200) return 0;
    results.push(result);
    // Something answered on this port: that is the service, and it is not ready.
    if (result.status !== undefined) break;
  }
  console.log(`healthcheck: not ready: ${results.map((r) => `${r.port} ${r.status ?? r.error}`).join(", ")}`);
  return 1;
}

main().then((code) => process.exit(code), () => process.exit(1));
