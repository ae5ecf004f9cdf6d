import { execFile, execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { parseAllDocuments } from "yaml";
import { QUEUES } from "../../packages/queues/src/catalog";
import { createTestEnv } from "../support/env";
import { databaseUrl, withAdmin } from "../support/pg-admin";
import { metricCatalog, parsePromQL, queryProblems, ROOT } from "./metric-catalog";

/**
 * The Kubernetes manifests as they would be applied: each overlay rendered with
 * `kubectl kustomize` (offline), parsed, and held to what k8s/README.md and
 * docs/operations.md promise. Metric names in alerts, KEDA triggers and the
 * Grafana dashboard are checked against the metrics the code registers.
 */
type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: unknown };

const K8S = path.join(ROOT, "k8s");
const SERVICES = { gateway: 9464, "check-worker": 9465, "billing-ledger": 9466, "webhook-dispatcher": 9467 } as const;
type ServiceName = keyof typeof SERVICES;
const WORKER_QUEUE: Record<Exclude<ServiceName, "gateway">, string> = { "check-worker": QUEUES.checks, "billing-ledger": QUEUES.settlements, "webhook-dispatcher": QUEUES.webhooks };
const SECRET_KEYS = ["DATABASE_URL", "REDIS_URL", "KEY_HASH_SECRET", "CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "VENDOR_PRIMARY_KEY", "VENDOR_SECONDARY_KEY"];
const QUEUE_NAMES = Object.values(QUEUES) as string[];

function render(dir: string): Obj[] {
  const out = execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return parseAllDocuments(out).map((d) => {
    if (d.errors.length > 0) throw d.errors[0];
    return d.toJS() as Obj;
  });
}

const OVERLAYS = ["production", "dev"] as const;
const rendered: Record<string, Obj[]> = {};
for (const o of OVERLAYS) rendered[o] = render(path.join(K8S, "overlays", o));

const all = (o: string, kind: string) => rendered[o]!.filter((r) => r.kind === kind);
const one = (o: string, kind: string, name: string) => {
  const found = rendered[o]!.filter((r) => r.kind === kind && r.metadata.name === name);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const selects = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
  !!selector?.matchLabels && Object.keys(selector.matchLabels).length > 0 && Object.entries(selector.matchLabels).every(([k, v]) => labels[k] === v);
const settingsOf = (o: string): Record<string, string> => {
  const maps = all(o, "ConfigMap").filter((c) => c.metadata.name.startsWith("svc-validate-settings-"));
  expect(maps).toHaveLength(1);
  return maps[0]!.data ?? {};
};
/** A container's value of an environment variable: its own env first, then the settings ConfigMap. */
function envValue(o: string, container: any, name: string): string | undefined {
  const own = (container.env ?? []).find((e: any) => e.name === name);
  if (own) return own.value;
  return settingsOf(o)[name];
}
const allPodSpecs = (o: string): { owner: string; spec: any }[] => [
  ...all(o, "Deployment").map((d) => ({ owner: `Deployment/${d.metadata.name}`, spec: d.spec.template.spec })),
  ...all(o, "Job").map((j) => ({ owner: `Job/${j.metadata.name}`, spec: j.spec.template.spec })),
];

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  const deployments = () => all(overlay, "Deployment");

  test("one Deployment per service, all from the one image", () => {
    expect(deployments().map((d) => d.metadata.name).sort()).toEqual(Object.keys(SERVICES).sort());
    const images = new Set<string>();
    for (const { spec } of allPodSpecs(overlay)) for (const c of [...(spec.initContainers ?? []), ...spec.containers]) images.add(c.image);
    expect(images.size).toBe(1);
    const [image] = [...images];
    expect(image).toMatch(/svc-validate:[a-z0-9][a-z0-9.-]*$/);
    for (const d of deployments()) {
      const main = d.spec.template.spec.containers.find((c: any) => c.name === d.metadata.name);
      expect(main.command.join(" ")).toContain(`services/${d.metadata.name}/dist/main.js`);
    }
  });

  test("probes on each service's operations port: startup and liveness /livez, readiness /readyz", () => {
    for (const d of deployments()) {
      const name = d.metadata.name as ServiceName;
      const c = d.spec.template.spec.containers.find((x: any) => x.name === name);
      const metricsPort = c.ports.find((p: any) => p.name === "metrics");
      expect(metricsPort?.containerPort).toBe(SERVICES[name]);
      expect(Number(envValue(overlay, c, "METRICS_PORT"))).toBe(SERVICES[name]);
      for (const [probe, pathName] of [["startupProbe", "/livez"], ["livenessProbe", "/livez"], ["readinessProbe", "/readyz"]] as const) {
        expect({ deployment: name, probe, get: c[probe]?.httpGet }).toEqual({ deployment: name, probe, get: { path: pathName, port: "metrics" } });
      }
    }
  });

  test("resources and a restricted securityContext on every container; /tmp is an emptyDir", () => {
    for (const { owner, spec } of allPodSpecs(overlay)) {
      expect({ owner, automount: spec.automountServiceAccountToken }).toEqual({ owner, automount: false });
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } });
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        const where = `${owner} ${c.name}`;
        expect({ where, requests: Object.keys(c.resources?.requests ?? {}).sort() }).toEqual({ where, requests: ["cpu", "memory"] });
        expect({ where, memoryLimit: typeof c.resources?.limits?.memory }).toEqual({ where, memoryLimit: "string" });
        expect({ where, sc: c.securityContext }).toMatchObject({
          where,
          sc: {
            runAsNonRoot: true,
            runAsUser: 10001,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
        });
      }
      for (const c of spec.containers) {
        const tmp = (c.volumeMounts ?? []).find((m: any) => m.mountPath === "/tmp");
        expect({ where: `${owner} ${c.name}`, tmp: !!tmp }).toEqual({ where: `${owner} ${c.name}`, tmp: true });
        expect(spec.volumes.find((v: any) => v.name === tmp.name)?.emptyDir).toBeDefined();
      }
    }
  });

  test("a PDB and zone and node topology spread select every Deployment's pods", () => {
    const pdbs = all(overlay, "PodDisruptionBudget");
    for (const d of deployments()) {
      const labels = d.spec.template.metadata.labels;
      const mine = pdbs.filter((p) => selects(p.spec.selector, labels));
      expect({ deployment: d.metadata.name, pdbs: mine.length }).toEqual({ deployment: d.metadata.name, pdbs: 1 });
      expect(mine[0]!.spec.maxUnavailable ?? mine[0]!.spec.minAvailable).toBeDefined();
      const spread = d.spec.template.spec.topologySpreadConstraints ?? [];
      const keys = spread.filter((t: any) => selects(t.labelSelector, labels)).map((t: any) => t.topologyKey).sort();
      expect({ deployment: d.metadata.name, keys }).toEqual({ deployment: d.metadata.name, keys: ["kubernetes.io/hostname", "topology.kubernetes.io/zone"] });
      // Autoscalers own the replica count; a fixed one would reset it on every apply.
      expect(d.spec.replicas).toBeUndefined();
    }
  });

  test("the gateway's preStop sleep and drain fit in the grace period; workers' shutdown too", () => {
    for (const d of deployments()) {
      const spec = d.spec.template.spec;
      const c = spec.containers.find((x: any) => x.name === d.metadata.name);
      const shutdownMs = Number(envValue(overlay, c, "SHUTDOWN_TIMEOUT_MS"));
      expect(shutdownMs).toBeGreaterThan(0);
      const grace = spec.terminationGracePeriodSeconds;
      if (d.metadata.name === "gateway") {
        const sleep = c.lifecycle?.preStop?.exec?.command ?? c.lifecycle?.preStop?.sleep;
        const sleepSeconds = Array.isArray(sleep) ? Number(sleep[sleep.length - 1]) : Number(sleep?.seconds);
        expect(sleepSeconds).toBeGreaterThan(0);
        const drainMs = Number(envValue(overlay, c, "DRAIN_DELAY_MS"));
        expect(drainMs).toBeGreaterThan(0);
        expect(drainMs).toBeLessThan(shutdownMs); // the gateway refuses to start otherwise
        // Counted apart even though the drain delay is inside SHUTDOWN_TIMEOUT_MS: a margin either way.
        expect(grace).toBeGreaterThan(sleepSeconds + (drainMs + shutdownMs) / 1000);
      } else {
        expect(grace).toBeGreaterThan(shutdownMs / 1000);
      }
    }
  });

  test("no secret values: no Secret object, secrets only by secretKeyRef from the existing Secret", () => {
    expect(all(overlay, "Secret")).toEqual([]);
    const text = JSON.stringify(rendered[overlay]);
    expect(text).not.toMatch(/REPLACE/i);
    for (const cm of all(overlay, "ConfigMap")) for (const key of Object.keys(cm.data ?? {})) expect(SECRET_KEYS).not.toContain(key);
    for (const { owner, spec } of allPodSpecs(overlay)) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        expect((c.envFrom ?? []).filter((e: any) => e.secretRef)).toEqual([]);
        for (const e of c.env ?? []) {
          if (!SECRET_KEYS.includes(e.name)) continue;
          expect({ owner, name: e.name, value: e.value, ref: e.valueFrom?.secretKeyRef }).toEqual({
            owner,
            name: e.name,
            value: undefined,
            ref: expect.objectContaining({ name: "svc-validate", key: e.name }),
          });
        }
      }
      const main = spec.containers[0];
      expect((main.env ?? []).some((e: any) => e.name === "DATABASE_URL" && e.valueFrom?.secretKeyRef)).toBe(true);
    }
  });

  test("the public Service exposes only the gateway's API port; nothing exposes an operations port", () => {
    const services = all(overlay, "Service");
    expect(services.map((s) => s.metadata.name)).toEqual(["gateway"]);
    const svc = services[0]!;
    const gateway = one(overlay, "Deployment", "gateway");
    expect(selects({ matchLabels: svc.spec.selector }, gateway.spec.template.metadata.labels)).toBe(true);
    expect(svc.spec.ports).toHaveLength(1);
    const target = svc.spec.ports[0].targetPort;
    const ports = gateway.spec.template.spec.containers[0].ports;
    const api = ports.find((p: any) => p.name === target || p.containerPort === target);
    expect(api).toEqual({ name: "http", containerPort: 8080 });
    expect(Number(envValue(overlay, gateway.spec.template.spec.containers[0], "PORT"))).toBe(8080);
  });

  test("the migration Job is named after the release, so each release runs it; it cleans up after itself", () => {
    const jobs = all(overlay, "Job");
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    const image: string = job.spec.template.spec.containers[0].image;
    const tag = image.slice(image.lastIndexOf(":") + 1);
    expect(job.metadata.name).toBe(`svc-validate-migrate-${tag}`);
    expect(job.spec.template.spec.containers[0].command).toEqual(["node", "scripts/prisma.mjs", "migrate", "deploy"]);
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    // The next release, as CI would make it: another tag in a copy of the tree.
    const copy = mkdtempSync(path.join(os.tmpdir(), "k8s-release-"));
    try {
      cpSync(K8S, path.join(copy, "k8s"), { recursive: true });
      const file = path.join(copy, "k8s", "overlays", overlay, "kustomization.yaml");
      const before = readFileSync(file, "utf8");
      const after = before.replace(/newTag: "[^"]*"/, 'newTag: "9.8.7-rc.1"');
      expect(after).not.toBe(before);
      writeFileSync(file, after);
      const next = render(path.join(copy, "k8s", "overlays", overlay)).filter((r) => r.kind === "Job");
      expect(next.map((j) => j.metadata.name)).toEqual(["svc-validate-migrate-9.8.7-rc.1"]);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test("every Deployment waits for its schema (init container with the schema gate)", () => {
    const gate = all(overlay, "ConfigMap").find((c) => c.metadata.name.startsWith("svc-validate-schema-gate-"));
    expect(gate?.data?.["wait-for-schema.cjs"]).toBe(readFileSync(path.join(K8S, "base", "wait-for-schema.cjs"), "utf8"));
    for (const d of deployments()) {
      const spec = d.spec.template.spec;
      const init = (spec.initContainers ?? []).find((c: any) => c.name === "wait-for-schema");
      expect(init?.command).toEqual(["node", "/opt/schema-gate/wait-for-schema.cjs"]);
      const mount = init.volumeMounts.find((m: any) => m.mountPath === "/opt/schema-gate");
      expect(spec.volumes.find((v: any) => v.name === mount.name)?.configMap?.name).toBe(gate!.metadata.name);
    }
  });
});

describe("production: monitoring and autoscaling", () => {
  const o = "production";

  test("each worker scales on its own queue (KEDA, Prometheus trigger on a catalog metric), never to zero", () => {
    const scaled = all(o, "ScaledObject");
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual(Object.keys(WORKER_QUEUE).sort());
    for (const s of scaled) {
      const worker = s.spec.scaleTargetRef.name as keyof typeof WORKER_QUEUE;
      expect(s.spec.scaleTargetRef.kind ?? "Deployment").toBe("Deployment");
      expect(s.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(s.spec.maxReplicaCount).toBeGreaterThan(s.spec.minReplicaCount);
      expect(s.spec.cooldownPeriod).toBeGreaterThan(0);
      expect(s.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds).toBeGreaterThan(0);
      expect(s.spec.triggers.length).toBeGreaterThan(0);
      const metricsUsed = new Set<string>();
      for (const t of s.spec.triggers) {
        expect(t.type).toBe("prometheus");
        expect(Number(t.metadata.threshold)).toBeGreaterThan(0);
        expect(queryProblems(t.metadata.query, QUEUE_NAMES)).toEqual([]);
        for (const sel of parsePromQL(t.metadata.query).selectors) {
          metricsUsed.add(sel.metric);
          // Its own queue, and nothing else.
          expect({ worker, metric: sel.metric, queue: sel.matchers.filter((m) => m.label === "queue") }).toEqual({
            worker,
            metric: sel.metric,
            queue: [{ label: "queue", op: "=", value: WORKER_QUEUE[worker] }],
          });
        }
      }
      expect([...metricsUsed].some((m) => m === "svc_queue_messages" || m === "svc_queue_oldest_waiting_age_seconds")).toBe(true);
    }
    // KEDA owns the workers' HPAs; the only plain HPA is the gateway's, on CPU.
    const hpas = all(o, "HorizontalPodAutoscaler");
    expect(hpas.map((h) => h.spec.scaleTargetRef.name)).toEqual(["gateway"]);
    expect(hpas[0]!.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpas[0]!.spec.metrics.some((m: any) => m.resource?.name === "cpu")).toBe(true);
  });

  test("the PodMonitor scrapes the operations port of every service's pods", () => {
    const [pm, ...more] = all(o, "PodMonitor");
    expect(more).toEqual([]);
    expect(pm!.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(pm!.spec.podMetricsEndpoints.map((e: any) => e.port)).toEqual(["metrics"]);
    for (const d of all(o, "Deployment")) {
      const labels = d.spec.template.metadata.labels;
      expect(selects(pm!.spec.selector, labels)).toBe(true);
      for (const e of pm!.spec.selector.matchExpressions ?? []) expect(e.values).toContain(labels[e.key]);
    }
  });

  test("alerts cover the issue's cases, use only metrics and labels the code exports, and have a runbook", () => {
    const rules = all(o, "PrometheusRule");
    expect(rules).toHaveLength(1);
    expect(rules[0]!.apiVersion).toBe("monitoring.coreos.com/v1");
    const alerts = rules[0]!.spec.groups.flatMap((g: any) => g.rules) as { alert: string; expr: string; labels: Record<string, string>; annotations: Record<string, string> }[];
    const doc = readFileSync(path.join(ROOT, "docs", "operations.md"), "utf8");
    const anchors = new Set([...doc.matchAll(/^#{2,4} (.+)$/gm)].map((m) => (m[1] as string).trim().toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")));
    const byMetric = (metric: string) => alerts.filter((a) => parsePromQL(a.expr).selectors.some((s) => s.metric === metric)).map((a) => a.alert);
    // The cases the issue names, each by the metric that shows it.
    expect(byMetric("svc_queue_oldest_waiting_age_seconds")).not.toEqual([]);
    expect(alerts.some((a) => parsePromQL(a.expr).selectors.some((s) => s.metric === "svc_queue_messages" && s.matchers.some((m) => m.label === "state" && m.value === "failed")))).toBe(true);
    expect(byMetric("svc_ledger_imbalance_micros")).not.toEqual([]);
    expect(byMetric("svc_webhook_attempts_total")).not.toEqual([]);
    expect(byMetric("svc_source_breaker_open")).not.toEqual([]);
    expect(alerts.some((a) => a.expr.includes("svc_http_requests_total") && a.expr.includes('status=~"5..')))
      .toBe(true);
    for (const a of alerts) {
      expect({ alert: a.alert, problems: queryProblems(a.expr, QUEUE_NAMES) }).toEqual({ alert: a.alert, problems: [] });
      expect(["critical", "warning", "info"]).toContain(a.labels?.severity);
      expect(a.annotations?.summary).toBeTruthy();
      const runbook = a.annotations?.runbook_url ?? "";
      expect(runbook).toBe(`docs/operations.md#${a.alert.toLowerCase()}`);
      expect({ alert: a.alert, documented: anchors.has(a.alert.toLowerCase()) }).toEqual({ alert: a.alert, documented: true });
    }
  });

  test("the Grafana dashboard queries only what the code exports, covers the issue's panels, and ships as a ConfigMap", () => {
    const file = path.join(K8S, "monitoring", "dashboards", "svc-fleet.json");
    const text = readFileSync(file, "utf8");
    const dash = JSON.parse(text);
    const variable = dash.templating.list.find((v: any) => v.name === "datasource");
    expect(variable).toMatchObject({ type: "datasource", query: "prometheus", current: { value: "prometheus" } });
    const panels = dash.panels.filter((p: any) => p.type !== "row");
    const used = new Set<string>();
    for (const p of panels) {
      expect({ panel: p.title, ds: p.datasource }).toEqual({ panel: p.title, ds: { type: "prometheus", uid: "${datasource}" } });
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) {
        expect({ panel: p.title, problems: queryProblems(t.expr, QUEUE_NAMES) }).toEqual({ panel: p.title, problems: [] });
        for (const s of parsePromQL(t.expr).selectors) used.add(s.metric.replace(/_(bucket|sum|count)$/, ""));
      }
    }
    for (const m of [
      "svc_http_requests_total",
      "svc_http_request_duration_seconds",
      "svc_queue_messages",
      "svc_queue_oldest_waiting_age_seconds",
      "svc_check_answers_total",
      "svc_reserved_micros_total",
      "svc_settled_micros_total",
      "svc_webhook_attempts_total",
      "svc_ledger_oldest_unsettled_seconds",
      "svc_source_breaker_open",
    ]) {
      expect({ metric: m, onDashboard: used.has(m) }).toEqual({ metric: m, onDashboard: true });
    }
    const ids = panels.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cm = one(o, "ConfigMap", "svc-validate-dashboards");
    expect(cm.metadata.labels?.grafana_dashboard).toBe("1");
    expect(cm.data?.["svc-fleet.json"]).toBe(text);
  });

  test("the catalog check itself catches a wrong name or label", () => {
    expect(metricCatalog().has("svc_queue_messages")).toBe(true);
    expect(queryProblems('max(svc_queue_mesages{queue="checks"})', QUEUE_NAMES)).toEqual([expect.stringContaining("unknown metric svc_queue_mesages")]);
    expect(queryProblems('max(svc_queue_messages{queue="check"})', QUEUE_NAMES)).toEqual([expect.stringContaining("no queue check")]);
    expect(queryProblems('max(svc_queue_messages{status="waiting"})', QUEUE_NAMES)).toEqual([expect.stringContaining("has no label status")]);
    expect(queryProblems("sum by (route) (rate(svc_webhook_attempts_total[5m]))", QUEUE_NAMES)).toEqual([expect.stringContaining("grouping by route")]);
    expect(queryProblems("histogram_quantile(0.99, sum by (le) (rate(svc_http_request_duration_seconds[5m])))", QUEUE_NAMES)).toContainEqual(
      expect.stringContaining("unknown metric svc_http_request_duration_seconds"),
    );
  });
});

describe("the schema gate, run as the init container runs it", () => {
  const script = path.join(K8S, "base", "wait-for-schema.cjs");
  const run = (url: string, timeoutMs: number) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = execFile(process.execPath, [script], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: url, MIGRATIONS_DIR: path.join(ROOT, "prisma", "migrations"), SCHEMA_WAIT_INTERVAL_MS: "200" },
        timeout: timeoutMs,
        encoding: "utf8",
      }, (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout }));
      void child;
    });

  test("passes on a migrated database, also with a newer release's migration applied; waits on an empty one", async () => {
    const env = await createTestEnv();
    const ready = await run(env.databaseUrl, 20_000);
    expect(ready).toMatchObject({ code: 0, out: expect.stringContaining("schema ready") });
    expect(ready.out).not.toContain("postgres@");

    const pg = await import("pg");
    const client = new pg.default.Client({ connectionString: env.databaseUrl });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO _prisma_migrations (id, checksum, migration_name, finished_at, applied_steps_count) VALUES ($1, 'x', '29991231000000_newer_release', now(), 1)`,
        [randomBytes(8).toString("hex")],
      );
    } finally {
      await client.end();
    }
    expect(await run(env.databaseUrl, 20_000)).toMatchObject({ code: 0 });

    const empty = `svc_t_${process.env.SVC_TEST_RUN_ID}_gate_${randomBytes(3).toString("hex")}`;
    await withAdmin((c) => c.query(`CREATE DATABASE "${empty}"`));
    try {
      const waiting = await run(databaseUrl(empty), 1_500);
      expect(waiting.code).not.toBe(0);
      expect(waiting.out).toContain("waiting for the database: 42P01");
    } finally {
      await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${empty}"`));
    }
  });
});
