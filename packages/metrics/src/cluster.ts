import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import type { OpsSource } from "./ops-server";
import type { Readiness } from "./readiness";
import { snapshot } from "./registry";

/**
 * With node:cluster (gateway, WEB_CONCURRENCY > 1) the processes share the public
 * port, and would share the operations port too: a scrape would reach one process
 * at random and its counters would jump between processes. So only the primary
 * listens on METRICS_PORT; it asks every process over the cluster's IPC channel
 * and answers with their metrics aggregated (counters and histograms summed,
 * per-queue gauges by max) and their readiness combined.
 */
const ASK = "svc-ops:ask";
const ANSWER = "svc-ops:answer";

type Ask = { type: typeof ASK; id: number; what: "metrics" | "readiness" };
type Answer = { type: typeof ANSWER; id: number; metrics?: MetricObjectWithValues<MetricValue<string>>[]; readiness?: Readiness; error?: boolean };

/** In a cluster worker: answers the primary's questions from this process's registry and checks. */
export function answerPrimary(readiness: () => Promise<Readiness>): void {
  process.on("message", (message: Ask) => {
    if (!message || message.type !== ASK) return;
    const send = (a: Omit<Answer, "type" | "id">) => process.send?.({ type: ANSWER, id: message.id, ...a });
    const work = message.what === "metrics" ? snapshot().then((metrics) => send({ metrics })) : readiness().then((r) => send({ readiness: r }));
    work.catch(() => send({ error: true }));
  });
}

let nextId = 0;

/** Asks every connected worker; answers that do not come within `timeoutMs` are left out. */
function askAll<T>(what: Ask["what"], pick: (a: Answer) => T | undefined, timeoutMs: number): Promise<T[]> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && w.isConnected());
  const id = (nextId += 1);
  return new Promise((resolve) => {
    const answers: T[] = [];
    let pending = workers.length;
    const finish = () => {
      clearTimeout(timer);
      cluster.off("message", onMessage);
      resolve(answers);
    };
    const onMessage = (_worker: Worker, message: Answer) => {
      if (!message || message.type !== ANSWER || message.id !== id) return;
      const value = pick(message);
      if (value !== undefined) answers.push(value);
      pending -= 1;
      if (pending === 0) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    cluster.on("message", onMessage);
    if (pending === 0) return finish();
    for (const w of workers) w.send({ type: ASK, id, what } satisfies Ask);
  });
}

/**
 * The primary's answers: every worker's metrics aggregated; ready when at least
 * one worker answered and every worker that answered is ready (one that is still
 * starting, or being replaced, answers not-ready and keeps the pod out of
 * rotation only until it is up).
 */
export function clusterSource(timeoutMs = 3_000): OpsSource {
  return {
    async metrics() {
      const all = await askAll("metrics", (a) => a.metrics, timeoutMs);
      const aggregated = AggregatorRegistry.aggregate(all);
      return { contentType: aggregated.contentType, body: await aggregated.metrics() };
    },
    async readiness() {
      const all = await askAll("readiness", (a) => a.readiness, Math.min(timeoutMs, 1_000));
      const checks: Readiness["checks"] = {};
      for (const r of all) for (const [name, state] of Object.entries(r.checks)) if (checks[name] === undefined || checks[name] === "ok") checks[name] = state;
      return { ready: all.length > 0 && all.every((r) => r.ready), checks };
    },
  };
}
