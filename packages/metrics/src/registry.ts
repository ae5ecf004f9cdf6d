import { readFileSync } from "node:fs";
import path from "node:path";
import { collectDefaultMetrics, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";

/**
 * The process's one metrics registry. Everything this repository measures is
 * registered here (see `metrics.ts`); nothing uses prom-client's global registry,
 * so a library that registers metrics of its own cannot leak them into /metrics.
 */
export const registry = new Registry();

let processMetricsStarted = false;

/**
 * Default process and Node.js metrics (CPU, memory, event-loop lag, GC, handles;
 * prom-client's names, no prefix) and `svc_build_info`. Called once by each
 * service at start-up; in-process tests that only build an app never call it.
 */
export function startProcessMetrics(service: string, version = packageVersion()): void {
  if (processMetricsStarted) return;
  processMetricsStarted = true;
  collectDefaultMetrics({ register: registry });
  const info = new Gauge({
    name: "svc_build_info",
    help: "Always 1; the labels say which service and which version of it this process runs.",
    labelNames: ["version", "service"] as const,
    registers: [registry],
    aggregator: "first",
  });
  info.set({ version, service }, 1);
}

/** The version in the package.json nearest to the entry point (the service's own). */
function packageVersion(): string {
  let dir = path.dirname(require.main?.filename ?? process.cwd());
  for (let i = 0; i < 5; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version?: unknown };
      if (typeof pkg.version === "string") return pkg.version;
    } catch {
      // not here: look one level up
    }
    dir = path.dirname(dir);
  }
  return "unknown";
}

type ScrapeHook = {
  name: string;
  run: () => Promise<void> | void;
  /** Results younger than this are served as they are (a 15 s scrape by two Prometheus replicas costs one refresh). */
  cacheMs: number;
  timeoutMs: number;
  refreshedAt: number;
  running: Promise<void> | null;
};

const hooks: ScrapeHook[] = [];

/**
 * Registers work that refreshes gauges just before a scrape (queue depths, pool
 * sizes, breaker states): computed when asked for, not on a timer, at most once per
 * `cacheMs`. A hook that takes longer than `timeoutMs` does not hold the scrape up
 * (the scrape serves what the gauges hold; the refresh finishes in the background
 * and no second one starts meanwhile). A hook that throws leaves its gauges as they
 * were: hooks clear their own series when their source cannot be read.
 */
export function onScrape(name: string, run: () => Promise<void> | void, options: { cacheMs?: number; timeoutMs?: number } = {}): void {
  hooks.push({ name, run, cacheMs: options.cacheMs ?? 0, timeoutMs: options.timeoutMs ?? 2_000, refreshedAt: 0, running: null });
}

async function refreshHook(hook: ScrapeHook, now: number): Promise<void> {
  if (!hook.running && now - hook.refreshedAt >= hook.cacheMs) {
    hook.running = (async () => hook.run())()
      .catch(() => undefined)
      .finally(() => {
        hook.refreshedAt = Date.now();
        hook.running = null;
      });
  }
  if (!hook.running) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([hook.running, new Promise<void>((resolve) => (timer = setTimeout(resolve, hook.timeoutMs)))]);
  clearTimeout(timer);
}

/** Runs every scrape hook that is due (concurrently), then reads the registry. */
async function refreshAll(): Promise<void> {
  const now = Date.now();
  await Promise.all(hooks.map((h) => refreshHook(h, now)));
}

/** The Prometheus text exposition of this process's registry, hooks refreshed. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  await refreshAll();
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** The registry as prom-client's JSON (what a cluster primary aggregates), hooks refreshed. */
export async function snapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
  await refreshAll();
  return registry.getMetricsAsJSON();
}
