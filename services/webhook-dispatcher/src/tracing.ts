/**
 * main.ts imports this first: with OTEL_EXPORTER_OTLP_ENDPOINT set, tracing must
 * hook `http`, `pg` and `ioredis` before anything loads them (off, it loads nothing).
 */
import { startTracingFromEnv } from "@svc/process/tracing";

startTracingFromEnv("webhook-dispatcher");
