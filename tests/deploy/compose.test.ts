import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { Env as LedgerEnv, loadServiceConfig as loadLedgerConfig } from "../../services/billing-ledger/src/config";
import { CheckWorkerEnv, loadCheckWorkerConfig } from "../../services/check-worker/src/config";
import { GatewayEnv, loadGatewayConfig } from "../../services/gateway/src/config";
import { DispatcherEnv, loadDispatcherConfig } from "../../services/webhook-dispatcher/src/config";

/**
 * docker/compose.yaml as a first-class route: parsed (and, where Docker's compose
 * or Debian's docker-compose is installed, validated by it) and held to its
 * invariants: healthchecks, depends_on conditions, secrets only from the generated
 * env file, commands the image has, observability only in its profile, Prometheus
 * scraping each service's operations port as the code defaults it, one public port.
 * And scripts/compose-env.mjs, which writes that env file.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const DOCKER = path.join(ROOT, "docker");
const COMPOSE_FILE = path.join(DOCKER, "compose.yaml");
const ENV_SCRIPT = path.join(ROOT, "scripts", "compose-env.mjs");

type Healthcheck = { test?: string[] | string; interval?: string; timeout?: string; retries?: number; start_period?: string };
type Service = {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  env_file?: unknown;
  healthcheck?: Healthcheck;
  depends_on?: Record<string, { condition?: string }> | string[];
  ports?: string[];
  profiles?: string[];
  restart?: string;
  volumes?: string[];
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const raw = readFileSync(COMPOSE_FILE, "utf8");
const compose = parse(raw, { merge: true }) as Compose;
const services = compose.services;

/** The services built from docker/Dockerfile, and what each one's configuration schema is. */
const FLEET = {
  gateway: { schema: GatewayEnv, load: loadGatewayConfig },
  "check-worker": { schema: CheckWorkerEnv, load: loadCheckWorkerConfig },
  "billing-ledger": { schema: LedgerEnv, load: loadLedgerConfig },
  "webhook-dispatcher": { schema: DispatcherEnv, load: loadDispatcherConfig },
} as const;
type FleetName = keyof typeof FLEET;
const FLEET_NAMES = Object.keys(FLEET) as FleetName[];
const defaultOpsPort = (name: FleetName) => (FLEET[name].schema.properties.METRICS_PORT as { default: number }).default;

/** One-shot services: another service waits for them to complete. */
const oneShot = new Set(
  Object.values(services).flatMap((s) =>
    Object.entries(s.depends_on && !Array.isArray(s.depends_on) ? s.depends_on : {})
      .filter(([, d]) => d.condition === "service_completed_successfully")
      .map(([name]) => name),
  ),
);
const longRunning = Object.keys(services).filter((name) => !oneShot.has(name));
const observability = ["prometheus", "grafana"];

/** `${NAME:?message}` and `${NAME}` replaced from `vars`, as compose does; anything else is left for the test to refuse. */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(/\$\{([A-Z0-9_]+)(:\?[^}]*)?\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined || v === "") throw new Error(`${name} is not set`);
    return v;
  });
}

/** Every string value in a parsed YAML document (comments are not values). */
function strings(node: unknown): string[] {
  if (typeof node === "string") return [node];
  if (Array.isArray(node)) return node.flatMap(strings);
  if (node && typeof node === "object") return Object.values(node).flatMap(strings);
  return [];
}

function readEnvFile(file: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) vars[m[1]!] = m[2]!;
  }
  return vars;
}

function runEnvScript(file: string, args: string[] = []) {
  return spawnSync(process.execPath, [ENV_SCRIPT, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", SVC_COMPOSE_ENV_FILE: file },
  });
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "svc-compose-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("scripts/compose-env.mjs", () => {
  it("creates the env file with random secrets of the right format, readable by its owner only", () => {
    const a = path.join(tmp, "a.env");
    const b = path.join(tmp, "b.env");
    const run = runEnvScript(a);
    expect(run.status).toBe(0);
    expect(runEnvScript(b).status).toBe(0);
    const va = readEnvFile(a);
    const vb = readEnvFile(b);
    expect(Object.keys(va).sort()).toEqual(["CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "GRAFANA_ADMIN_PASSWORD", "KEY_HASH_SECRET", "POSTGRES_PASSWORD"]);
    expect(va.KEY_HASH_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(va.CACHE_HASH_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(va.KEY_HASH_SECRET).not.toBe(va.CACHE_HASH_SECRET);
    expect(va.DATA_ENCRYPTION_KEY).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(va.DATA_ENCRYPTION_KEY!, "base64")).toHaveLength(32);
    // It goes into DATABASE_URL unescaped.
    expect(va.POSTGRES_PASSWORD).toMatch(/^[0-9a-f]{32,}$/);
    expect(va.GRAFANA_ADMIN_PASSWORD).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    for (const name of Object.keys(va)) expect(vb[name]).not.toBe(va[name]);
    expect(statSync(a).mode & 0o777).toBe(0o600);
    // Names what it wrote, never a value.
    for (const value of Object.values(va)) expect(run.stdout + run.stderr).not.toContain(value);
  });

  it("never overwrites an existing file; a secret it lacks is added, the others stay", () => {
    const file = path.join(tmp, "kept.env");
    expect(runEnvScript(file).status).toBe(0);
    const before = readFileSync(file, "utf8");
    expect(runEnvScript(file).status).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(before);

    const partial = path.join(tmp, "partial.env");
    writeFileSync(partial, "# mine\nKEY_HASH_SECRET=kept-value-kept-value-kept-value-kept\nEXTRA=1\n");
    expect(runEnvScript(partial).status).toBe(0);
    const text = readFileSync(partial, "utf8");
    expect(text.startsWith("# mine\nKEY_HASH_SECRET=kept-value-kept-value-kept-value-kept\nEXTRA=1\n")).toBe(true);
    const vars = readEnvFile(partial);
    expect(vars.KEY_HASH_SECRET).toBe("kept-value-kept-value-kept-value-kept");
    expect(vars.DATA_ENCRYPTION_KEY).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(text.match(/^KEY_HASH_SECRET=/gm)).toHaveLength(1);
  });

  it("generates every variable the compose file requires, and the compose file requires every one it generates", () => {
    const file = path.join(tmp, "names.env");
    expect(runEnvScript(file).status).toBe(0);
    const required = new Set(strings(parse(raw)).flatMap((v) => [...v.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1])));
    expect([...required].sort()).toEqual(Object.keys(readEnvFile(file)).sort());
  });

  it("docker/.env is git-ignored and kept out of the image's build context", () => {
    expect(spawnSync("git", ["check-ignore", "-q", "docker/.env"], { cwd: ROOT }).status).toBe(0);
    expect(readFileSync(path.join(ROOT, ".dockerignore"), "utf8")).toMatch(/^docker\/\.env\*?$/m);
  });

  it("npm run compose:up runs docker compose on this file with the generated env file", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["compose:up"]).toBe("node scripts/compose-env.mjs up --build");
    const script = readFileSync(ENV_SCRIPT, "utf8");
    expect(script).toMatch(/"-f", COMPOSE_FILE, "--env-file", ENV_FILE/);
  });
});

describe("docker/compose.yaml", () => {
  it("every long-running service has a healthcheck", () => {
    expect(longRunning.sort()).toEqual([...FLEET_NAMES, "postgres", "redis", ...observability].sort());
    for (const name of longRunning) {
      const hc = services[name]!.healthcheck;
      expect({ name, test: Array.isArray(hc?.test) && hc.test[0] === "CMD" && hc.test.length > 1 }).toEqual({ name, test: true });
      expect({ name, interval: hc?.interval, timeout: hc?.timeout }).toEqual({ name, interval: expect.stringMatching(/^\d+s$/), timeout: expect.stringMatching(/^\d+s$/) });
    }
    expect([...oneShot]).toEqual(["migrate"]);
    expect(services.migrate!.restart).toBe("no");
  });

  it("the fleet's healthcheck is its /readyz on its operations port, the port the code defaults to", () => {
    for (const name of FLEET_NAMES) {
      const s = services[name]!;
      expect(s.healthcheck?.test).toEqual(["CMD", "node", "docker/healthcheck.cjs"]);
      expect({ name, port: s.environment?.METRICS_PORT }).toEqual({ name, port: String(defaultOpsPort(name)) });
    }
    expect(readFileSync(path.join(DOCKER, "healthcheck.cjs"), "utf8")).toMatch(/\/readyz/);
  });

  it("every depends_on names a condition; the fleet waits for the migration and healthy Postgres and Redis", () => {
    const conditions = new Set(["service_healthy", "service_completed_successfully", "service_started"]);
    for (const [name, s] of Object.entries(services)) {
      if (s.depends_on === undefined) continue;
      expect({ name, list: Array.isArray(s.depends_on) }).toEqual({ name, list: false });
      for (const [dep, d] of Object.entries(s.depends_on as Record<string, { condition?: string }>)) {
        expect({ name, dep, ok: conditions.has(d.condition ?? "") }).toEqual({ name, dep, ok: true });
        expect(services[dep]).toBeDefined();
        // A dependency that can say it is healthy is waited for until it does.
        if (services[dep]!.healthcheck) expect({ name, dep, condition: d.condition }).toEqual({ name, dep, condition: "service_healthy" });
        // The default profile never waits on the optional one.
        if (!services[name]!.profiles) expect(services[dep]!.profiles).toBeUndefined();
      }
    }
    for (const name of FLEET_NAMES) {
      expect(services[name]!.depends_on).toEqual({
        migrate: { condition: "service_completed_successfully" },
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
    }
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
  });

  it("has no hard-coded secret and no fallback value: secrets come from the env file or compose stops", () => {
    // ${X:-default} and ${X-default} would start a fleet on a value from this repository.
    expect(raw.match(/\$\{[A-Za-z0-9_]+:?-[^}]*\}/g)).toBeNull();
    expect(raw.match(/\$[A-Za-z_]/g)).toBeNull(); // only the ${…} form, which the checks below see
    for (const [name, s] of Object.entries(services)) {
      expect({ name, env_file: s.env_file }).toEqual({ name, env_file: undefined });
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        const v = String(value);
        if (/SECRET|_KEY$|PASSWORD|TOKEN/.test(key)) expect({ name, key, v }).toEqual({ name, key, v: expect.stringMatching(/^\$\{[A-Z0-9_]+:\?[^}]+\}$/) });
        if (/^postgres(ql)?:\/\//.test(v)) expect({ name, key, v }).toEqual({ name, key, v: expect.stringMatching(/^postgresql:\/\/postgres:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\//) });
      }
    }
  });

  it("gives each service the settings its configuration requires, valid once the generated file is interpolated", () => {
    const file = path.join(tmp, "config.env");
    expect(runEnvScript(file).status).toBe(0);
    const vars = readEnvFile(file);
    const requiredSomewhere = new Set<string>();
    for (const name of FLEET_NAMES) {
      const environment = Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
      // Required with no default: the service refuses to start without it.
      const properties = FLEET[name].schema.properties as Record<string, { default?: unknown }>;
      const required = ((FLEET[name].schema as { required?: string[] }).required ?? []).filter((key) => properties[key]?.default === undefined);
      required.forEach((key) => requiredSomewhere.add(key));
      for (const key of required) expect({ name, key, set: key in environment }).toEqual({ name, key, set: true });
      // Each gets only settings it reads (so only the secrets it uses).
      for (const key of Object.keys(environment)) expect({ name, key, known: key in properties }).toEqual({ name, key, known: true });
      expect(() => FLEET[name].load(environment)).not.toThrow();
      expect(environment.NODE_ENV).toBe("production");
    }
    expect([...requiredSomewhere].sort()).toEqual(["CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "KEY_HASH_SECRET"]);
  });

  it("every fleet service runs the one image with a command the image has", () => {
    const dockerfile = readFileSync(path.join(DOCKER, "Dockerfile"), "utf8");
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    const built = Object.entries(services).filter(([, s]) => s.build);
    expect(built.map(([n]) => n).sort()).toEqual([...FLEET_NAMES, "migrate"].sort());
    for (const [name, s] of built) {
      expect({ name, build: s.build, image: s.image }).toEqual({ name, build: { context: "..", dockerfile: "docker/Dockerfile" }, image: "svc-validate:local" });
    }
    expect(services.gateway!.command).toEqual(cmd);
    for (const name of FLEET_NAMES) {
      const command = services[name]!.command!;
      expect(command[0]).toBe("node");
      expect(command.at(-1)).toBe(`services/${name}/dist/main.js`);
      expect(existsSync(path.join(ROOT, command.at(-1)!))).toBe(true);
    }
    expect(services.migrate!.command).toEqual(["node", "scripts/prisma.mjs", "migrate", "deploy"]);
    // docker/runtime-files.sh puts these in the image (tests/deploy/docker.test.ts runs it).
    const assemble = readFileSync(path.join(DOCKER, "runtime-files.sh"), "utf8");
    expect(assemble).toMatch(/scripts\/prisma\.mjs/);
    expect(assemble).toMatch(/for dir in packages\/\* services\/\*/);
  });

  it("publishes only the API's 8080; Prometheus and Grafana on loopback; no operations port", () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, p: String(p) })));
    expect(published.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "gateway", p: "8080:8080" },
      { name: "grafana", p: "127.0.0.1:3000:3000" },
      { name: "prometheus", p: "127.0.0.1:9090:9090" },
    ]);
  });

  it("Prometheus and Grafana are only in the observability profile", () => {
    for (const [name, s] of Object.entries(services)) {
      expect({ name, profiles: s.profiles }).toEqual({ name, profiles: observability.includes(name) ? ["observability"] : undefined });
    }
  });

  it("Prometheus scrapes every service's operations port, as the code defaults it", () => {
    const volumes = services.prometheus!.volumes ?? [];
    expect(volumes).toContain("./observability/prometheus.yml:/etc/prometheus/prometheus.yml:ro");
    expect(services.prometheus!.command).toContain("--config.file=/etc/prometheus/prometheus.yml");
    const config = parse(readFileSync(path.join(DOCKER, "observability", "prometheus.yml"), "utf8")) as {
      scrape_configs: Array<{ job_name: string; metrics_path?: string; dns_sd_configs?: Array<{ names: string[]; type: string; port: number }> }>;
    };
    const targets = config.scrape_configs.flatMap((job) =>
      (job.dns_sd_configs ?? []).flatMap((sd) => sd.names.map((host) => ({ job: job.job_name, target: `${host}:${sd.port}`, path: job.metrics_path ?? "/metrics" }))),
    );
    expect(targets.sort((a, b) => a.job.localeCompare(b.job))).toEqual(
      FLEET_NAMES.map((name) => ({ job: name, target: `${name}:${defaultOpsPort(name)}`, path: "/metrics" })).sort((a, b) => a.job.localeCompare(b.job)),
    );
  });

  it("Grafana is provisioned with the Prometheus datasource and the fleet dashboard, and its password comes from the env file", () => {
    const g = services.grafana!;
    expect(g.environment?.GF_SECURITY_ADMIN_PASSWORD).toMatch(/^\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}$/);
    expect(g.environment?.GF_AUTH_ANONYMOUS_ENABLED).toBe("false");
    const mounts = Object.fromEntries((g.volumes ?? []).map((v) => v.split(":")).map(([from, to, mode]) => [to, { from, mode }]));
    expect(mounts["/etc/grafana/provisioning"]).toEqual({ from: "./observability/grafana/provisioning", mode: "ro" });

    const provisioning = path.join(DOCKER, "observability", "grafana", "provisioning");
    const datasources = parse(readFileSync(path.join(provisioning, "datasources", "prometheus.yml"), "utf8")) as { datasources: Array<{ uid: string; type: string; url: string }> };
    expect(datasources.datasources).toEqual([expect.objectContaining({ uid: "prometheus", type: "prometheus", url: "http://prometheus:9090" })]);

    const providers = (parse(readFileSync(path.join(provisioning, "dashboards", "svc-validate.yml"), "utf8")) as { providers: Array<{ type: string; options: { path: string } }> }).providers;
    expect(providers).toHaveLength(1);
    const dashboardsIn = providers[0]!.options.path;
    // The provider reads the directory the compose file mounts from the Kubernetes monitoring component.
    expect(mounts[dashboardsIn]).toEqual({ from: "../k8s/monitoring/dashboards", mode: "ro" });
    const onHost = path.resolve(DOCKER, "../k8s/monitoring/dashboards");
    expect(existsSync(onHost)).toBe(true);
    const dashboards = readdirSync(onHost).filter((f) => f.endsWith(".json"));
    expect(dashboards).toContain("svc-fleet.json");
    expect(g.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(`${dashboardsIn}/svc-fleet.json`);
    // Panels name the datasource by the provisioned uid (directly or through a datasource variable).
    for (const file of dashboards) {
      const text = readFileSync(path.join(onHost, file), "utf8");
      const uids = new Set([...text.matchAll(/"uid":\s*"([^"]*)"/g)].map((m) => m[1]));
      const dashboard = JSON.parse(text) as { uid?: string; templating?: { list?: Array<{ type: string; query?: unknown }> } };
      const dsVariables = (dashboard.templating?.list ?? []).filter((v) => v.type === "datasource");
      for (const v of dsVariables) expect(v.query).toBe("prometheus");
      for (const uid of uids) if (uid !== dashboard.uid && !uid!.startsWith("$")) expect({ file, uid }).toEqual({ file, uid: "prometheus" });
    }
  });

  it("is valid for docker compose itself, when installed, and stops without the env file naming the variable", () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/SECRET|_KEY$|PASSWORD|^COMPOSE_/.test(k))) as NodeJS.ProcessEnv;
    const works = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: "ignore", env }).status === 0;
    const compose = works("docker", ["compose", "version"]) ? ["docker", "compose"] : works("docker-compose", ["version"]) ? ["docker-compose"] : null;
    // Without either, the parsing checks above are the validation (they do not depend on it).
    if (!compose) return;
    const [cmd, ...pre] = compose as [string, ...string[]];
    const file = path.join(tmp, "cli.env");
    expect(runEnvScript(file).status).toBe(0);
    const run = (envFile: string, args: string[]) => spawnSync(cmd, [...pre, "-f", COMPOSE_FILE, "--env-file", envFile, ...args], { cwd: ROOT, encoding: "utf8", env });

    const valid = run(file, ["config", "-q"]);
    expect({ status: valid.status, stderr: valid.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    const withProfile = run(file, ["--profile", "observability", "config", "--services"]);
    expect(withProfile.status).toBe(0);
    expect(withProfile.stdout.split("\n").filter(Boolean).sort()).toEqual([...Object.keys(services)].sort());

    const empty = path.join(tmp, "empty.env");
    writeFileSync(empty, "");
    const refused = run(empty, ["config", "-q"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/POSTGRES_PASSWORD|KEY_HASH_SECRET|CACHE_HASH_SECRET|DATA_ENCRYPTION_KEY|GRAFANA_ADMIN_PASSWORD/);
    expect(refused.stderr).toMatch(/npm run compose:up/);
  });
});
