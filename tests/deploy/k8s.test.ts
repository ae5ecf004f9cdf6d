import { execFile, execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { parseAllDocuments } from "yaml";
import { isDeliverableAddress, parseRanges } from "@svc/domain";
import { QUEUES } from "../../packages/queues/src/catalog";
import { createTestEnv } from "../support/env";
import { databaseUrl, withAdmin } from "../support/pg-admin";
import { metricCatalog, parsePromQL, queryProblems, ROOT } from "./metric-catalog";

/**
 * The Kubernetes manifests as they would be applied: each overlay rendered with
 * `kubectl kustomize` (offline), parsed, and held to what k8s/README.md and
 * docs/operations.md promise. Metric names in alerts, KEDA triggers and the
 * Grafana dashboard are checked against the metrics the code registers. The
 * network policies are read as a CNI would: for each pod, every source and
 * destination (and port) some policy selecting it allows.
 */
type Obj = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: any; data?: Record<string, string>; stringData?: unknown };

const K8S = path.join(ROOT, "k8s");
const SERVICES = { gateway: 9464, "check-worker": 9465, "billing-ledger": 9466, "webhook-dispatcher": 9467 } as const;
type ServiceName = keyof typeof SERVICES;
const WORKER_QUEUE: Record<Exclude<ServiceName, "gateway">, string> = { "check-worker": QUEUES.checks, "billing-ledger": QUEUES.settlements, "webhook-dispatcher": QUEUES.webhooks };
const SECRET_KEYS = [
  "DATABASE_URL",
  "DATABASE_REPLICA_URL",
  "REDIS_URL",
  "KEY_HASH_SECRET",
  "CACHE_HASH_SECRET",
  "DATA_ENCRYPTION_KEY",
  "FLEET_MESSAGE_KEY",
  "FLEET_MESSAGE_KEY_ACCEPT",
  "VENDOR_PRIMARY_KEY",
  "VENDOR_SECONDARY_KEY",
  "GATEWAY_DATABASE_URL",
  "CHECK_WORKER_DATABASE_URL",
  "BILLING_LEDGER_DATABASE_URL",
  "WEBHOOK_DISPATCHER_DATABASE_URL",
];
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
/** The pod template of a workload: a Deployment's or Job's, or a CronJob's jobs'. */
const templateOf = (r: Obj): any => (r.kind === "CronJob" ? r.spec.jobTemplate.spec.template : r.spec.template);
const WORKLOADS = ["Deployment", "Job", "CronJob"];
const workloads = (o: string): Obj[] => WORKLOADS.flatMap((kind) => all(o, kind));
const allPodSpecs = (o: string): { owner: string; spec: any }[] => workloads(o).map((r) => ({ owner: `${r.kind}/${r.metadata.name}`, spec: templateOf(r).spec }));

/** Where each pod's secrets come from: container → environment variable → Secret and key. */
type SecretRef = { secret: string; key: string; optional: boolean };
const SHARED_SECRET = "svc-validate";
const ownSecret = (service: ServiceName) => `svc-validate-${service}`;
const ref = (secret: string, key: string, optional = false): SecretRef => ({ secret, key, optional });
const fleetKeys = { FLEET_MESSAGE_KEY: ref(SHARED_SECRET, "FLEET_MESSAGE_KEY"), FLEET_MESSAGE_KEY_ACCEPT: ref(SHARED_SECRET, "FLEET_MESSAGE_KEY_ACCEPT", true) };
const serviceSecrets = (service: ServiceName, more: Record<string, SecretRef>) => ({
  "wait-for-schema": { DATABASE_URL: ref(ownSecret(service), "DATABASE_URL") },
  [service]: { DATABASE_URL: ref(ownSecret(service), "DATABASE_URL"), REDIS_URL: ref(ownSecret(service), "REDIS_URL"), ...fleetKeys, ...more },
});
/** Keyed by the pod's `app` label. The shared keys each service used before per-service Secrets, plus the fleet key. */
const SECRETS_OF: Record<string, Record<string, Record<string, SecretRef>>> = {
  gateway: serviceSecrets("gateway", {
    DATABASE_REPLICA_URL: ref(ownSecret("gateway"), "DATABASE_REPLICA_URL", true),
    KEY_HASH_SECRET: ref(SHARED_SECRET, "KEY_HASH_SECRET"),
    CACHE_HASH_SECRET: ref(SHARED_SECRET, "CACHE_HASH_SECRET"),
    DATA_ENCRYPTION_KEY: ref(SHARED_SECRET, "DATA_ENCRYPTION_KEY"),
  }),
  "check-worker": serviceSecrets("check-worker", {
    CACHE_HASH_SECRET: ref(SHARED_SECRET, "CACHE_HASH_SECRET"),
    VENDOR_PRIMARY_KEY: ref(ownSecret("check-worker"), "VENDOR_PRIMARY_KEY", true),
    VENDOR_SECONDARY_KEY: ref(ownSecret("check-worker"), "VENDOR_SECONDARY_KEY", true),
  }),
  "billing-ledger": serviceSecrets("billing-ledger", {}),
  "webhook-dispatcher": serviceSecrets("webhook-dispatcher", { DATA_ENCRYPTION_KEY: ref(SHARED_SECRET, "DATA_ENCRYPTION_KEY") }),
  // The schema owner, and each service's DATABASE_URL (its login role to create or update); nothing else.
  migrate: {
    migrate: {
      DATABASE_URL: ref("svc-validate-migrate", "DATABASE_URL"),
      GATEWAY_DATABASE_URL: ref(ownSecret("gateway"), "DATABASE_URL"),
      CHECK_WORKER_DATABASE_URL: ref(ownSecret("check-worker"), "DATABASE_URL"),
      BILLING_LEDGER_DATABASE_URL: ref(ownSecret("billing-ledger"), "DATABASE_URL"),
      WEBHOOK_DISPATCHER_DATABASE_URL: ref(ownSecret("webhook-dispatcher"), "DATABASE_URL"),
    },
  },
  // The schema owner's partition upkeep: the owner's login, nothing else.
  "partition-upkeep": { "partition-upkeep": { DATABASE_URL: ref("svc-validate-migrate", "DATABASE_URL") } },
};

// ---- Network policies, read as a CNI reads them ------------------------------------------------

/** Same plain data (keys in any order), whatever realm made the objects. */
const canonical = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(canonical) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, canonical(x)])) : v;
const sameData = (a: unknown, b: unknown) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

type Cidr = { text: string; net: ReturnType<typeof parseRanges>[number][0]; bits: number; kind: "ipv4" | "ipv6" };
/** An address or CIDR range, or null when it is neither (what the API server refuses). */
function cidr(text: string): Cidr | null {
  if (typeof text !== "string") return null;
  const withBits = text.includes("/") ? text : isIP(text) ? `${text}/${isIP(text) === 6 ? 128 : 32}` : text;
  try {
    const [[net, bits]] = parseRanges([withBits]) as [[Cidr["net"], number]];
    return { text, net, bits, kind: net.kind() };
  } catch {
    return null;
  }
}
/** `inner` lies inside `outer`. */
const within = (inner: Cidr, outer: Cidr) => inner.kind === outer.kind && inner.bits >= outer.bits && inner.net.match(outer.net, outer.bits);
/** The widest block that names a few machines (a database's subnets, the ingress controller's pods); anything wider is "the internet". */
const NARROW = { ipv4: 16, ipv6: 48 } as const;
/** Ranges that are not the public internet; a wide egress block must cut out each one it contains. */
const NOT_PUBLIC = [
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4",
  "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "fc00::/7", "fe80::/10", "ff00::/8",
].map((c) => cidr(c)!);
/** Cloud metadata endpoints (EC2, GCE, Azure: 169.254.169.254; EC2 over IPv6: fd00:ec2::254). */
const METADATA = ["169.254.169.254", "fd00:ec2::254"].map((c) => cidr(c)!);

/** The peers the component ships with (k8s/network-policies); an overlay that patches them updates these. */
const KUBE_DNS = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } };
const INGRESS_CONTROLLER = {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } },
  podSelector: { matchLabels: { "app.kubernetes.io/name": "ingress-nginx" } },
};
const PROMETHEUS = { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } };
const OPS_PORTS: number[] = Object.values(SERVICES);
const API_PORT = 8080;

/** What each pod may reach, by the kind of destination, protocol and port (keyed by its `app` label). */
const DNS_AND_POSTGRES = ["dns TCP/53", "dns UDP/53", "datastore TCP/5432"];
const EGRESS: Record<string, string[]> = {
  gateway: [...DNS_AND_POSTGRES, "datastore TCP/6379"],
  "billing-ledger": [...DNS_AND_POSTGRES, "datastore TCP/6379"],
  "check-worker": [...DNS_AND_POSTGRES, "datastore TCP/6379", "public TCP/25", "public TCP/443"],
  "webhook-dispatcher": [...DNS_AND_POSTGRES, "datastore TCP/6379", "public TCP/443"],
  migrate: DNS_AND_POSTGRES,
  "partition-upkeep": DNS_AND_POSTGRES,
};

type Pod = { owner: string; app: string; labels: Record<string, string>; spec: any };
const podsIn = (objs: Obj[]): Pod[] =>
  objs
    .filter((r) => WORKLOADS.includes(r.kind))
    .map((r) => ({ owner: `${r.kind}/${r.metadata.name}`, app: templateOf(r).metadata.labels.app, labels: templateOf(r).metadata.labels, spec: templateOf(r).spec }));

/** A label selector as the API reads it: `{}` selects everything. */
function matchesSelector(sel: any, labels: Record<string, string>): boolean {
  if (!sel) return false;
  if (!Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v)) return false;
  return (sel.matchExpressions ?? []).every((e: any) => {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    if (e.operator === "In") return has && e.values.includes(labels[e.key]);
    if (e.operator === "NotIn") return !has || !e.values.includes(labels[e.key]);
    if (e.operator === "Exists") return has;
    if (e.operator === "DoesNotExist") return !has;
    throw new Error(`unknown operator ${e.operator}`);
  });
}
const isEmptySelector = (sel: any) => Object.keys(sel?.matchLabels ?? {}).length === 0 && (sel?.matchExpressions ?? []).length === 0;

type Direction = "Ingress" | "Egress";
const policiesIn = (objs: Obj[]) => objs.filter((r) => r.kind === "NetworkPolicy");
const policyTypes = (p: Obj): string[] => p.spec.policyTypes ?? ["Ingress", ...(p.spec.egress ? ["Egress"] : [])];
const selecting = (objs: Obj[], pod: Pod, dir: Direction) => policiesIn(objs).filter((p) => matchesSelector(p.spec.podSelector, pod.labels) && policyTypes(p).includes(dir));

type Allow = { where: string; peer: any; port: string };
/** Every (peer, port) a pod's policies allow in one direction; a rule without peers or ports allows any (`{ any: true }`, "any"). */
function allowsOf(objs: Obj[], pod: Pod, dir: Direction): Allow[] {
  const out: Allow[] = [];
  for (const p of selecting(objs, pod, dir)) {
    (((dir === "Ingress" ? p.spec.ingress : p.spec.egress) ?? []) as any[]).forEach((rule, i) => {
      const peers: any[] = (dir === "Ingress" ? rule.from : rule.to) ?? [];
      const ports: any[] = rule.ports ?? [];
      for (const peer of peers.length > 0 ? peers : [{ any: true }]) {
        for (const port of ports.length > 0 ? ports : [null]) {
          const text = port === null ? "any" : `${port.protocol ?? "TCP"}/${port.port ?? "any"}${port.endPort ? `-${port.endPort}` : ""}`;
          out.push({ where: `${p.metadata.name} ${dir.toLowerCase()}[${i}]`, peer, port: text });
        }
      }
    });
  }
  return out;
}

/** What an egress peer is: the cluster DNS, a datastore (a few addresses or pods), the public internet, or something it must not be. */
function egressClass(peer: any, problems: string[], where: string): string {
  if (peer.any) return "anywhere";
  if (sameData(peer, KUBE_DNS)) return "dns";
  if (peer.ipBlock) {
    const block = cidr(peer.ipBlock.cidr);
    if (!block) return `invalid CIDR ${peer.ipBlock.cidr}`;
    const except = ((peer.ipBlock.except ?? []) as string[]).map((e) => cidr(e));
    if (block.bits >= NARROW[block.kind] && except.length === 0) return "datastore";
    for (const range of NOT_PUBLIC) {
      if (within(block, range)) problems.push(`${where}: ${block.text} is inside the non-public ${range.text}`);
      else if (within(range, block) && !except.some((e) => e && within(range, e))) problems.push(`${where}: ${block.text} does not except ${range.text}`);
    }
    return "public";
  }
  if (peer.namespaceSelector && isEmptySelector(peer.namespaceSelector)) return `every namespace ${JSON.stringify(peer)}`;
  if (!peer.podSelector || isEmptySelector(peer.podSelector)) return `every pod of ${JSON.stringify(peer)}`;
  return "datastore";
}

/** TRUSTED_PROXIES as the gateway reads it (its own env first, then the settings ConfigMap). */
function trustedProxiesIn(objs: Obj[]): string[] {
  const gateway = objs.find((r) => r.kind === "Deployment" && r.metadata.name === "gateway")!;
  const c = gateway.spec.template.spec.containers.find((x: any) => x.name === "gateway");
  const own = (c.env ?? []).find((e: any) => e.name === "TRUSTED_PROXIES");
  const settings = objs.find((r) => r.kind === "ConfigMap" && r.metadata.name.startsWith("svc-validate-settings-"));
  const value: string = own ? own.value : (settings?.data?.TRUSTED_PROXIES ?? "");
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

/** What an ingress peer is: the ingress controller (its pods, or a load balancer's addresses the gateway trusts), Prometheus, or something else. */
function ingressClass(peer: any, trusted: Cidr[]): string {
  if (peer.any) return "anywhere";
  if (sameData(peer, INGRESS_CONTROLLER)) return "ingress-controller";
  if (sameData(peer, PROMETHEUS)) return "prometheus";
  if (peer.ipBlock) {
    const block = cidr(peer.ipBlock.cidr);
    if (block && !(peer.ipBlock.except ?? []).length && trusted.some((t) => within(block, t))) return "ingress-controller";
    return `ipBlock ${peer.ipBlock.cidr} (not inside TRUSTED_PROXIES)`;
  }
  return JSON.stringify(peer);
}

function isolationProblems(objs: Obj[]): string[] {
  const problems: string[] = [];
  const denies = policiesIn(objs).filter((p) => ["Ingress", "Egress"].every((t) => policyTypes(p).includes(t)) && !(p.spec.ingress ?? []).length && !(p.spec.egress ?? []).length);
  if (denies.length === 0) problems.push("no default-deny policy (Ingress and Egress, no rules)");
  for (const pod of podsIn(objs)) if (!denies.some((p) => matchesSelector(p.spec.podSelector, pod.labels))) problems.push(`${pod.owner}: no default-deny policy selects it`);
  return problems;
}

function ingressProblems(objs: Obj[]): string[] {
  const problems: string[] = [];
  const trusted = trustedProxiesIn(objs).map((e) => cidr(e)).filter((c): c is Cidr => c !== null);
  for (const pod of podsIn(objs)) {
    if (selecting(objs, pod, "Ingress").length === 0) problems.push(`${pod.owner}: no policy isolates its ingress`);
    const own = SERVICES[pod.app as ServiceName];
    const allowed = new Set(allowsOf(objs, pod, "Ingress").map((a) => `${ingressClass(a.peer, trusted)} ${a.port}`));
    // Prometheus may be let in on any of the four operations ports (one policy for the fleet); the pod's own must be among them.
    const seen = [...allowed].filter((s) => !(s.startsWith("prometheus TCP/") && OPS_PORTS.includes(Number(s.slice("prometheus TCP/".length))) && Number(s.slice("prometheus TCP/".length)) !== own));
    const expected = [...(pod.app === "gateway" ? [`ingress-controller TCP/${API_PORT}`] : []), ...(own ? [`prometheus TCP/${own}`] : [])];
    if (!sameData(seen.sort(), expected.sort())) problems.push(`${pod.owner}: ingress ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`);
  }
  return problems;
}

function egressProblems(objs: Obj[]): string[] {
  const problems: string[] = [];
  for (const pod of podsIn(objs)) {
    if (selecting(objs, pod, "Egress").length === 0) problems.push(`${pod.owner}: no policy isolates its egress`);
    const allows = allowsOf(objs, pod, "Egress");
    const seen = [...new Set(allows.map((a) => `${egressClass(a.peer, problems, `${pod.owner} ${a.where}`)} ${a.port}`))].sort();
    const expected = [...(EGRESS[pod.app] ?? ["(unknown pod)"])].sort();
    if (!sameData(seen, expected)) problems.push(`${pod.owner}: egress ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)}`);
    // The public internet in both families, so IPv6 destinations are not simply refused nor let through whole.
    const publicFamilies = new Set(allows.filter((a) => a.peer.ipBlock && cidr(a.peer.ipBlock.cidr) && egressClass(a.peer, [], "") === "public").map((a) => cidr(a.peer.ipBlock.cidr)!.kind));
    if (expected.some((e) => e.startsWith("public")) && publicFamilies.size !== 2) problems.push(`${pod.owner}: public egress for ${[...publicFamilies].join(", ") || "no family"}, expected ipv4 and ipv6`);
    // No route to the cloud metadata endpoint through any block.
    for (const a of allows) {
      if (!a.peer.ipBlock) continue;
      const block = cidr(a.peer.ipBlock.cidr);
      const except = ((a.peer.ipBlock.except ?? []) as string[]).map((e) => cidr(e));
      for (const m of METADATA) if (block && within(m, block) && !except.some((e) => e && within(m, e))) problems.push(`${pod.owner} ${a.where}: reaches the metadata endpoint ${m.text}`);
    }
  }
  return problems;
}

function proxyProblems(objs: Obj[], ingressInFront: boolean): string[] {
  const problems: string[] = [];
  const entries = trustedProxiesIn(objs);
  if (ingressInFront && entries.length === 0) problems.push("TRUSTED_PROXIES is empty: every client would have the ingress controller's address");
  const trusted: Cidr[] = [];
  for (const e of entries) {
    const c = cidr(e);
    if (!c) problems.push(`TRUSTED_PROXIES: ${e} is not an address or CIDR range`);
    else if (c.bits < NARROW[c.kind]) problems.push(`TRUSTED_PROXIES: ${e} is wider than /${NARROW[c.kind]} (a whole network, not the ingress controller)`);
    else trusted.push(c);
  }
  const gateway = podsIn(objs).find((p) => p.app === "gateway")!;
  const api = allowsOf(objs, gateway, "Ingress").filter((a) => a.port === `TCP/${API_PORT}` || a.port === "TCP/http" || a.port.includes("any"));
  if (api.length === 0) problems.push("no policy lets the ingress controller reach the API port");
  for (const a of api) {
    const kind = ingressClass(a.peer, trusted);
    if (kind !== "ingress-controller") problems.push(`the API port is open to ${kind} (${a.where})`);
  }
  return problems;
}

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  const deployments = () => all(overlay, "Deployment");

  test("one Deployment per service, all from the one image", () => {
    expect(deployments().map((d) => d.metadata.name).sort()).toEqual(Object.keys(SERVICES).sort());
    const images = new Set<string>();
    for (const { spec } of allPodSpecs(overlay)) for (const c of [...(spec.initContainers ?? []), ...spec.containers]) images.add(c.image);
    expect(images.size).toBe(1);
    const [image] = [...images];
    // A tag (it names the migration Job), and in production a digest after it.
    expect(image).toMatch(/svc-validate:[a-z0-9][a-z0-9.-]*(@sha256:[0-9a-f]{64})?$/);
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
      // The code listens on 127.0.0.1 by default; the pod's address is what the kubelet and Prometheus reach.
      // In the container's own env, beside METRICS_PORT, not left to a shared ConfigMap an overlay merges into.
      expect({ deployment: name, env: (c.env ?? []).find((e: any) => e.name === "METRICS_HOST") }).toEqual({
        deployment: name,
        env: { name: "METRICS_HOST", value: "0.0.0.0" },
      });
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

  test("no secret values: no Secret object, secrets only by secretKeyRef from existing Secrets", () => {
    expect(all(overlay, "Secret")).toEqual([]);
    const text = JSON.stringify(rendered[overlay]);
    expect(text).not.toMatch(/REPLACE/i);
    for (const cm of all(overlay, "ConfigMap")) for (const key of Object.keys(cm.data ?? {})) expect(SECRET_KEYS).not.toContain(key);
    for (const { owner, spec } of allPodSpecs(overlay)) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        expect((c.envFrom ?? []).filter((e: any) => e.secretRef)).toEqual([]);
        for (const e of c.env ?? []) {
          if (!SECRET_KEYS.includes(e.name)) continue;
          expect({ owner, name: e.name, value: e.value, ref: !!e.valueFrom?.secretKeyRef }).toEqual({ owner, name: e.name, value: undefined, ref: true });
        }
      }
      expect({ owner, secretVolumes: (spec.volumes ?? []).filter((v: any) => v.secret || v.projected) }).toEqual({ owner, secretVolumes: [] });
    }
  });

  test("each pod reads its own service's Secret and only the shared keys it uses; the migration Job only database logins", () => {
    for (const d of workloads(overlay)) {
      const spec = templateOf(d).spec;
      const app: string = templateOf(d).metadata.labels.app;
      const refs: Record<string, Record<string, SecretRef>> = {};
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        for (const e of c.env ?? []) {
          const r = e.valueFrom?.secretKeyRef;
          if (r) (refs[c.name] ??= {})[e.name] = ref(r.name, r.key, r.optional === true);
        }
      }
      expect({ pod: `${d.kind}/${d.metadata.name}`, refs }).toEqual({ pod: `${d.kind}/${d.metadata.name}`, refs: SECRETS_OF[app] });
      // Said once more as the rule it is: a service's pods never name another service's Secret.
      const names = new Set(Object.values(refs).flatMap((r) => Object.values(r).map((x) => x.secret)));
      if (app in SERVICES) expect([...names].sort()).toEqual([SHARED_SECRET, ownSecret(app as ServiceName)].sort());
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
    const named = image.split("@")[0]!;
    const tag = named.slice(named.lastIndexOf(":") + 1);
    expect(job.metadata.name).toBe(`svc-validate-migrate-${tag}`);
    // Migrations as the schema owner, then the services' login roles and grants.
    expect(job.spec.template.spec.containers[0].command).toEqual(["node", "scripts/db-deploy.mjs"]);
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    expect(job.spec.backoffLimit).toBeGreaterThan(0);
    expect(job.spec.template.spec.restartPolicy).toBe("Never");
    // The next release, as CI would make it: another tag in a copy of the tree.
    const copy = mkdtempSync(path.join(os.tmpdir(), "k8s-release-"));
    try {
      cpSync(K8S, path.join(copy, "k8s"), { recursive: true });
      const file = path.join(copy, "k8s", "overlays", overlay, "kustomization.yaml");
      const before = readFileSync(file, "utf8");
      const digest = `sha256:${"5e".repeat(32)}`;
      const after = before.replace(/newTag: "[^"]*"/, 'newTag: "9.8.7-rc.1"').replace(/digest: sha256:[0-9a-f]{64}/, `digest: ${digest}`);
      expect(after).not.toBe(before);
      writeFileSync(file, after);
      const next = render(path.join(copy, "k8s", "overlays", overlay)).filter((r) => r.kind === "Job");
      expect(next.map((j) => j.metadata.name)).toEqual(["svc-validate-migrate-9.8.7-rc.1"]);
      if (before.includes("digest:")) expect(next[0]!.spec.template.spec.containers[0].image).toMatch(new RegExp(`:9\\.8\\.7-rc\\.1@${digest}$`));
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

  describe("network policies", () => {
    const objs = () => rendered[overlay]!;

    test("a default-deny policy (ingress and egress) selects every pod of the app", () => {
      // The four services, the migration Job and the partition upkeep's CronJob.
      expect(podsIn(objs()).map((p) => p.owner)).toHaveLength(Object.keys(SERVICES).length + 2);
      expect(isolationProblems(objs())).toEqual([]);
    });

    test("ingress: the API port from the ingress controller only, operations ports from Prometheus only, nothing else", () => {
      expect(ingressProblems(objs())).toEqual([]);
    });

    test("egress: DNS, Postgres and Redis for all; the public internet (no private, reserved or metadata range) on 443 and 25 for the check-worker, 443 for the webhook-dispatcher; the Jobs Postgres only", () => {
      expect(egressProblems(objs())).toEqual([]);
    });

    test("datastore addresses are set by the overlay (valid ranges a few machines wide, or pod selectors), and only the gateway reaches the read replica", () => {
      const blocks = policiesIn(objs()).flatMap((p) => ((p.spec.egress ?? []) as any[]).flatMap((r) => (r.to ?? []).filter((x: any) => x.ipBlock).map((x: any) => x.ipBlock.cidr as string)));
      expect(blocks.length).toBeGreaterThan(0);
      expect(blocks.filter((b) => cidr(b) === null)).toEqual([]);
      const replica = policiesIn(objs()).find((p) => p.metadata.name === "svc-validate-egress-postgres-replica");
      if (replica) expect(podsIn(objs()).filter((p) => matchesSelector(replica.spec.podSelector, p.labels)).map((p) => p.app)).toEqual(["gateway"]);
      else expect(overlay).toBe("dev"); // no replica in dev
    });

    test("TRUSTED_PROXIES is the ingress controller's addresses, never a whole network, and only they reach the API port", () => {
      expect(trustedProxiesIn(objs())).not.toContain("10.0.0.0/8");
      expect(proxyProblems(objs(), overlay === "production")).toEqual([]);
    });
  });
});

describe("production: monitoring and autoscaling", () => {
  const o = "production";

  test("images are pinned by digest (the tag stays for people and names the migration Job)", () => {
    for (const { owner, spec } of allPodSpecs(o)) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        expect({ owner, image: c.image }).toEqual({ owner, image: expect.stringMatching(/^[^@\s]+\/svc-validate:[a-z0-9][a-z0-9.-]*@sha256:[0-9a-f]{64}$/) });
      }
    }
  });

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

describe("the network policy component and its checks", () => {
  test("an overlay that does not say where Postgres and Redis are gets values the API server refuses (apply fails, nothing is opened)", () => {
    const copy = mkdtempSync(path.join(os.tmpdir(), "k8s-bare-"));
    try {
      cpSync(K8S, path.join(copy, "k8s"), { recursive: true });
      const dir = path.join(copy, "k8s", "overlays", "bare");
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, "kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: bare\nresources: [../../base]\ncomponents: [../../network-policies]\n",
      );
      const objs = render(dir);
      for (const name of ["svc-validate-egress-postgres", "svc-validate-egress-postgres-replica", "svc-validate-egress-redis"]) {
        const p = objs.find((r) => r.kind === "NetworkPolicy" && r.metadata.name === name)!;
        const to = p.spec.egress.flatMap((r: any) => r.to);
        expect({ name, to: to.length, valid: to.filter((x: any) => !x.ipBlock || cidr(x.ipBlock.cidr) !== null) }).toEqual({ name, to: 1, valid: [] });
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test("the code agrees that every range the policies cut out of the internet is not public", () => {
    for (const r of NOT_PUBLIC) expect({ range: r.text, deliverable: isDeliverableAddress(r.net.toString()) }).toEqual({ range: r.text, deliverable: false });
  });

  test("the checks themselves catch a private range let through, a split ingress peer, a rule without ports and a too-wide TRUSTED_PROXIES", () => {
    const mutate = (change: (objs: Obj[]) => void) => {
      const objs = JSON.parse(JSON.stringify(rendered.production!)) as Obj[];
      change(objs);
      return objs;
    };
    const policy = (objs: Obj[], name: string) => objs.find((r) => r.kind === "NetworkPolicy" && r.metadata.name === name)!;
    // The metadata endpoint's range no longer cut out of the webhook-dispatcher's and check-worker's internet.
    const leaky = mutate((objs) => {
      const v4 = policy(objs, "svc-validate-egress-public-https").spec.egress[0].to.find((x: any) => x.ipBlock.cidr === "0.0.0.0/0");
      v4.ipBlock.except = v4.ipBlock.except.filter((e: string) => e !== "169.254.0.0/16");
    });
    expect(egressProblems(leaky)).toEqual(
      expect.arrayContaining([
        expect.stringContaining("does not except 169.254.0.0/16"),
        expect.stringMatching(/Deployment\/webhook-dispatcher .*reaches the metadata endpoint 169\.254\.169\.254/),
      ]),
    );
    // 0.0.0.0/0 with no exceptions at all, on Redis's port, for the billing-ledger.
    const open = mutate((objs) => {
      policy(objs, "svc-validate-egress-redis").spec.egress[0].to.push({ ipBlock: { cidr: "0.0.0.0/0" } });
    });
    expect(egressProblems(open)).toEqual(expect.arrayContaining([expect.stringContaining("does not except 10.0.0.0/8"), expect.stringMatching(/billing-ledger: egress .*public TCP\/6379/)]));
    // An egress rule without ports.
    const anyPort = mutate((objs) => {
      delete policy(objs, "svc-validate-egress-dns").spec.egress[0].ports;
    });
    expect(egressProblems(anyPort)).toEqual(expect.arrayContaining([expect.stringMatching(/Job\/.*egress .*"dns any"/)]));
    // Namespace and pods as two peers: every pod of ingress-nginx's namespace, or any pod labelled so in ours.
    const split = mutate((objs) => {
      policy(objs, "svc-validate-ingress-api").spec.ingress[0].from = [
        { namespaceSelector: INGRESS_CONTROLLER.namespaceSelector },
        { podSelector: INGRESS_CONTROLLER.podSelector },
      ];
    });
    expect(ingressProblems(split)).toEqual([expect.stringContaining("Deployment/gateway: ingress")]);
    expect(proxyProblems(split, true)).toHaveLength(2);
    // The load balancer's subnet let in, but not trusted; and a pod network trusted whole.
    const lb = mutate((objs) => {
      policy(objs, "svc-validate-ingress-api").spec.ingress[0].from.push({ ipBlock: { cidr: "203.0.113.0/24" } });
      objs.find((r) => r.kind === "ConfigMap" && r.metadata.name.startsWith("svc-validate-settings-"))!.data!.TRUSTED_PROXIES = "10.0.0.0/8";
    });
    expect(proxyProblems(lb, true)).toEqual([
      expect.stringContaining("10.0.0.0/8 is wider than /16"),
      expect.stringContaining("203.0.113.0/24 (not inside TRUSTED_PROXIES)"),
    ]);
    const trustedLb = mutate((objs) => {
      policy(objs, "svc-validate-ingress-api").spec.ingress[0].from.push({ ipBlock: { cidr: "203.0.113.0/26" } });
      objs.find((r) => r.kind === "ConfigMap" && r.metadata.name.startsWith("svc-validate-settings-"))!.data!.TRUSTED_PROXIES = "192.0.2.0/26,203.0.113.0/24";
    });
    expect(proxyProblems(trustedLb, true)).toEqual([]);
  });
});
