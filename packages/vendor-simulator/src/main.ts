#!/usr/bin/env node
import { startSimulator } from "./simulator";

/**
 * Development vendor: `npm run simulator` (port SIM_PORT, default 9090; address
 * SIM_HOST, default 127.0.0.1: docker/compose.yaml sets 0.0.0.0). Point the
 * check-worker at it with VENDOR_PRIMARY_URL=http://127.0.0.1:9090.
 */
const num = (name: string, fallback: number) => (process.env[name] === undefined ? fallback : Number(process.env[name]));
startSimulator({
  port: num("SIM_PORT", 9090),
  host: process.env.SIM_HOST ?? "127.0.0.1",
  latencyMs: num("SIM_LATENCY_MS", 0),
  failureRate: num("SIM_FAILURE_RATE", 0),
  outage: process.env.SIM_OUTAGE === "true",
  apiKey: process.env.SIM_API_KEY ?? "sim-key",
}).then((sim) => {
  process.stdout.write(`vendor simulator listening on ${sim.url.replace("127.0.0.1", process.env.SIM_HOST ?? "127.0.0.1")}\n`);
  const stop = () => void sim.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
});
