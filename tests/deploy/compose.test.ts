import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { AdminEnv, loadAdminConfig } from "../../packages/admin/src/config";
import { Env as LedgerEnv, loadServiceConfig as loadLedgerConfig } from "../../services/billing-ledger/src/config";
import { CheckWorkerEnv, loadCheckWorkerConfig } from "../../services/check-worker/src/config";
import { GatewayEnv, loadGatewayConfig } from "../../services/gateway/src/config";
import { DispatcherEnv, loadDispatcherConfig } from "../../services/webhook-dispatcher/src/config";
import { freePort } from "../observability/support";

/**
 * docker/compose.yaml as a first-class route: parsed (and, where Docker's compose
 * or Debian's docker-compose is installed, validated by it) and held to its
 * invariants: healthchecks, depends_on conditions, secrets only from the generated
 * env file and each container only its own, no superuser and no password-less
 * Redis, every container hardened, commands the image has, observability only in
 * its profile, Prometheus scraping each service's operations port as the code
 * defaults it, one public port. And scripts/compose-env.mjs, which writes that env
 * file.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const DOCKER = path.join(ROOT, "docker");
const COMPOSE_FILE = path.join(DOCKER, "compose.yaml");
const ENV_SCRIPT = path.join(ROOT, "scripts", "compose-env.mjs");

type Healthcheck = { test?: string[] | string; interval?: string; timeout?: string; retries?: number; start_period?: string; disable?: boolean };
type Service = {
  image?: string;
  user?: string;
  read_only?: boolean;
  tmpfs?: string[] | string;
  cap_drop?: string[];
  cap_add?: string[];
  security_opt?: string[];
  privileged?: boolean;
  network_mode?: string;
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
/** Run on demand (`compose run`), never by `up`. */
const tools = new Set(Object.keys(services).filter((name) => services[name]!.profiles?.includes("tools")));
/** Scheduled work in a loop (the partition upkeep): no port, no readiness to probe. */
const scheduled = ["partition-upkeep"];
const longRunning = Object.keys(services).filter((name) => !oneShot.has(name) && !tools.has(name) && !scheduled.includes(name));
const observability = ["prometheus", "grafana"];
const hasHealthcheck = (s: Service) => s.healthcheck !== undefined && s.healthcheck.disable !== true;

/** What each service is called in the names of its own secrets and login roles. */
const upper = (name: FleetName) => name.toUpperCase().replace(/-/g, "_");
const pgRole = (name: FleetName) => `svc_${name.replace(/-/g, "_")}`;
const redisUser = (name: FleetName) => `svc-${name}`;

/** The `${NAME…}` variables a service's definition uses anywhere (environment, command, healthcheck). */
const variablesOf = (s: Service) => [...new Set(strings(s).flatMap((v) => [...v.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!)))].sort();

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
    const passwords = [
      "POSTGRES_PASSWORD",
      "POSTGRES_OWNER_PASSWORD",
      ...FLEET_NAMES.map((n) => `${upper(n)}_DATABASE_PASSWORD`),
      ...FLEET_NAMES.map((n) => `${upper(n)}_REDIS_PASSWORD`),
      "ADMIN_REDIS_PASSWORD",
    ];
    expect(Object.keys(va).sort()).toEqual(
      [...passwords, "CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "FLEET_MESSAGE_KEY", "GRAFANA_ADMIN_PASSWORD", "KEY_HASH_SECRET", "VENDOR_PRIMARY_KEY"].sort(),
    );
    expect(va.VENDOR_PRIMARY_KEY).toMatch(/^[0-9a-f]{48}$/);
    expect(va.KEY_HASH_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(va.CACHE_HASH_SECRET).toMatch(/^[0-9a-f]{64}$/);
    for (const key of ["DATA_ENCRYPTION_KEY", "FLEET_MESSAGE_KEY"]) {
      expect(va[key]).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(va[key]!, "base64")).toHaveLength(32);
    }
    // They go into DATABASE_URL and REDIS_URL unescaped.
    for (const key of passwords) expect({ key, v: va[key] }).toEqual({ key, v: expect.stringMatching(/^[0-9a-f]{32,}$/) });
    expect(va.GRAFANA_ADMIN_PASSWORD).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // Every secret its own value, and every file its own secrets.
    expect(new Set(Object.values(va)).size).toBe(Object.keys(va).length);
    for (const name of Object.keys(va)) expect(vb[name]).not.toBe(va[name]);
    expect(statSync(a).mode & 0o777).toBe(0o600);
    // Names what it wrote, never a value.
    for (const value of Object.values(va)) expect(run.stdout + run.stderr).not.toContain(value);
  });

  it("makes an existing file readable by group or others 0600, without changing what it holds", () => {
    const full = path.join(tmp, "loose.env");
    expect(runEnvScript(full).status).toBe(0);
    const before = readFileSync(full, "utf8");
    chmodSync(full, 0o644);
    const run = runEnvScript(full);
    expect(run.status).toBe(0);
    expect(statSync(full).mode & 0o777).toBe(0o600);
    expect(readFileSync(full, "utf8")).toBe(before);
    expect(run.stderr).toMatch(/now mode 0600/);

    // A partial one, group-writable: completed and narrowed.
    const partial = path.join(tmp, "loose-partial.env");
    writeFileSync(partial, "KEY_HASH_SECRET=kept-value-kept-value-kept-value-kept\n", { mode: 0o660 });
    chmodSync(partial, 0o660);
    expect(runEnvScript(partial).status).toBe(0);
    expect(statSync(partial).mode & 0o777).toBe(0o600);
    expect(readEnvFile(partial).KEY_HASH_SECRET).toBe("kept-value-kept-value-kept-value-kept");

    // Already 0600: nothing said about it.
    expect(runEnvScript(full).stderr).not.toMatch(/mode/);
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
    expect(longRunning.sort()).toEqual([...FLEET_NAMES, "postgres", "redis", "vendor-simulator", ...observability].sort());
    for (const name of longRunning) {
      const hc = services[name]!.healthcheck;
      expect({ name, test: Array.isArray(hc?.test) && hc.test[0] === "CMD" && hc.test.length > 1 && hc.disable !== true }).toEqual({ name, test: true });
      expect({ name, interval: hc?.interval, timeout: hc?.timeout }).toEqual({ name, interval: expect.stringMatching(/^\d+s$/), timeout: expect.stringMatching(/^\d+s$/) });
    }
    expect([...oneShot].sort()).toEqual(["migrate", "redis-acl"]);
    expect([...tools]).toEqual(["admin"]);
    for (const name of [...oneShot, ...tools]) {
      expect(services[name]!.restart).toBe("no");
      // The image's HEALTHCHECK asks a fleet service; a one-shot is none.
      expect(services[name]!.healthcheck).toEqual({ disable: true });
    }
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
        if (hasHealthcheck(services[dep]!)) expect({ name, dep, condition: d.condition }).toEqual({ name, dep, condition: "service_healthy" });
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
    // Redis starts only once the ACL file it is told to load has been written.
    expect(services.redis!.depends_on).toEqual({ "redis-acl": { condition: "service_completed_successfully" } });
    expect(services["redis-acl"]!.depends_on).toBeUndefined();
  });

  it("hardens every container: read-only root, a tmpfs /tmp, no capabilities, no-new-privileges, never root", () => {
    for (const [name, s] of Object.entries(services)) {
      const tmpfs = typeof s.tmpfs === "string" ? [s.tmpfs] : (s.tmpfs ?? []);
      expect({ name, read_only: s.read_only, tmp: tmpfs.some((t) => t === "/tmp" || t.startsWith("/tmp:")) }).toEqual({ name, read_only: true, tmp: true });
      expect({ name, cap_drop: s.cap_drop, cap_add: s.cap_add, privileged: s.privileged }).toEqual({ name, cap_drop: ["ALL"], cap_add: undefined, privileged: undefined });
      expect({ name, security_opt: s.security_opt }).toEqual({ name, security_opt: expect.arrayContaining(["no-new-privileges:true"]) });
      // The fleet's image runs as 10001 (docker/Dockerfile's USER); an override is a numeric non-root user.
      if (s.user !== undefined) expect({ name, user: s.user }).toEqual({ name, user: expect.stringMatching(/^[1-9]\d*:[1-9]\d*$/) });
      expect(s.network_mode === "host").toBe(false);
    }
    // Postgres and Redis as their images' own user: the entrypoints' chown and setuid
    // steps (which need capabilities) are skipped.
    expect(services.postgres!.user).toBe("999:999");
    expect(services.redis!.user).toBe("999:999");
    expect(services.postgres!.tmpfs).toEqual(expect.arrayContaining([expect.stringMatching(/^\/var\/run\/postgresql(:|$)/)]));
  });

  it("gives each container only its own credentials and the shared secrets it uses", () => {
    const db = (n: FleetName) => `${upper(n)}_DATABASE_PASSWORD`;
    const rd = (n: FleetName) => `${upper(n)}_REDIS_PASSWORD`;
    const expected: Record<string, string[]> = {
      postgres: ["POSTGRES_OWNER_PASSWORD", "POSTGRES_PASSWORD"],
      redis: ["ADMIN_REDIS_PASSWORD"],
      "redis-acl": ["ADMIN_REDIS_PASSWORD", ...FLEET_NAMES.map(rd)],
      migrate: ["POSTGRES_OWNER_PASSWORD", ...FLEET_NAMES.map(db)],
      gateway: [db("gateway"), rd("gateway"), "FLEET_MESSAGE_KEY", "KEY_HASH_SECRET", "CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY"],
      "check-worker": [db("check-worker"), rd("check-worker"), "FLEET_MESSAGE_KEY", "CACHE_HASH_SECRET", "VENDOR_PRIMARY_KEY"],
      "billing-ledger": [db("billing-ledger"), rd("billing-ledger"), "FLEET_MESSAGE_KEY"],
      "webhook-dispatcher": [db("webhook-dispatcher"), rd("webhook-dispatcher"), "FLEET_MESSAGE_KEY", "DATA_ENCRYPTION_KEY"],
      prometheus: [],
      grafana: ["GRAFANA_ADMIN_PASSWORD"],
      admin: ["KEY_HASH_SECRET", "POSTGRES_OWNER_PASSWORD", "VENDOR_PRIMARY_KEY"],
      "vendor-simulator": ["VENDOR_PRIMARY_KEY"],
      "partition-upkeep": ["POSTGRES_OWNER_PASSWORD"],
    };
    expect(Object.keys(services).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, s] of Object.entries(services)) expect({ name, secrets: variablesOf(s) }).toEqual({ name, secrets: [...expected[name]!].sort() });
  });

  it("no service or migration uses the Postgres superuser; each service logs in as its own role", () => {
    const postgresUrls = Object.entries(services).flatMap(([name, s]) =>
      Object.entries(s.environment ?? {})
        .filter(([, v]) => /^postgres(ql)?:\/\//.test(String(v)))
        .map(([key, v]) => ({ name, key, url: String(v) })),
    );
    const userOf = (url: string) => /^postgresql:\/\/([^:@/]+):\$\{([A-Z0-9_]+):\?[^}]+\}@postgres:5432\/svc_validate$/.exec(url);
    for (const { name, key, url } of postgresUrls) {
      expect({ name, key, form: userOf(url) !== null }).toEqual({ name, key, form: true });
      expect({ name, key, user: userOf(url)![1] }).not.toEqual({ name, key, user: "postgres" });
    }
    for (const name of FLEET_NAMES) {
      const m = userOf(services[name]!.environment!.DATABASE_URL!)!;
      expect({ name, user: m[1], password: m[2] }).toEqual({ name, user: pgRole(name), password: `${upper(name)}_DATABASE_PASSWORD` });
      // …and the migration sets that role's password from the very same URL.
      expect(services.migrate!.environment![`${upper(name)}_DATABASE_URL`]).toBe(services[name]!.environment!.DATABASE_URL);
    }
    // The migration runs as the schema owner, which postgres-init creates with that password.
    expect(userOf(services.migrate!.environment!.DATABASE_URL!)!.slice(1)).toEqual(["svc_owner", "POSTGRES_OWNER_PASSWORD"]);
    expect(services.migrate!.environment!.HOME).toBe("/tmp");
    expect(services.postgres!.environment!.POSTGRES_OWNER_PASSWORD).toMatch(/^\$\{POSTGRES_OWNER_PASSWORD:\?[^}]+\}$/);
    expect(services.postgres!.volumes).toContain("./postgres-init:/docker-entrypoint-initdb.d:ro");
    const init = readdirSync(path.join(DOCKER, "postgres-init"));
    expect(init).toEqual(["10-svc-owner.sh"]);
    const script = readFileSync(path.join(DOCKER, "postgres-init", "10-svc-owner.sh"), "utf8");
    expect(script).toMatch(/ALTER ROLE svc_owner WITH LOGIN CREATEROLE NOSUPERUSER NOCREATEDB NOREPLICATION NOBYPASSRLS PASSWORD :'owner_password'/);
    expect(script).toMatch(/ALTER DATABASE :"DBNAME" OWNER TO svc_owner/);
    expect(script).toMatch(/\\getenv owner_password POSTGRES_OWNER_PASSWORD/);
    // Postgres's healthcheck waits for TCP (the first start's initialisation listens on the socket only).
    expect(services.postgres!.healthcheck?.test).toEqual(expect.arrayContaining(["pg_isready", "-h", "127.0.0.1"]));
  });

  it("Redis: every service is its own ACL user with a password; the ACL file comes from the one-shot; the default user must be refused", () => {
    for (const name of FLEET_NAMES) {
      const url = services[name]!.environment!.REDIS_URL!;
      expect({ name, url }).toEqual({ name, url: `redis://${redisUser(name)}:\${${upper(name)}_REDIS_PASSWORD:?run npm run compose:up to generate docker/.env}@redis:6379` });
    }
    const acl = services["redis-acl"]!;
    expect(acl.command?.slice(0, 2)).toEqual(["node", "scripts/redis-acl.mjs"]);
    const out = acl.command![acl.command!.indexOf("--out") + 1]!;
    const aclDir = path.posix.dirname(out);
    expect(acl.volumes).toEqual([`redisacl:${aclDir}`]);
    expect(acl.network_mode).toBe("none");
    // It writes as Redis's user, so Redis can read a file only its owner may.
    expect(acl.user).toBe(services.redis!.user);
    const redis = services.redis!;
    expect(redis.command?.[redis.command.indexOf("--aclfile") + 1]).toBe(out);
    expect(redis.volumes).toContain(`redisacl:${aclDir}:ro`);
    expect(redis.command).not.toContain("--requirepass");
    expect(compose.volumes).toHaveProperty("redisacl");
    // The image has that directory, owned by that user, so the new volume is theirs.
    expect(readFileSync(path.join(DOCKER, "Dockerfile"), "utf8")).toContain(`install -d -o 999 -g 999 -m 0700 ${aclDir}`);
    // The healthcheck authenticates (password from the environment, not the command line)…
    const test = redis.healthcheck!.test as string[];
    expect(test.slice(0, 3)).toEqual(["CMD", "sh", "-c"]);
    expect(test[3]).toMatch(/redis-cli --no-auth-warning --user [a-z-]+ ping \| grep -qx PONG/);
    expect(redis.environment).toEqual({ REDISCLI_AUTH: expect.stringMatching(/^\$\{ADMIN_REDIS_PASSWORD:\?[^}]+\}$/) });
    // …and fails while a connection without one is answered.
    expect(test[3]).toMatch(/! env -u REDISCLI_AUTH redis-cli ping 2>&1 \| grep -qx PONG$/);
  });

  it("the ACL file the one-shot writes has the users the services and the healthcheck log in as, and the default user off", () => {
    const file = path.join(tmp, "acl.env");
    expect(runEnvScript(file).status).toBe(0);
    const vars = readEnvFile(file);
    // The one-shot's command and environment, as compose would run it (stdout instead of --out).
    const environment = Object.fromEntries(Object.entries(services["redis-acl"]!.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
    const run = spawnSync(process.execPath, [services["redis-acl"]!.command![1]!], { cwd: ROOT, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...environment } });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
    // Redis refuses an ACL file with anything but `user` lines (a comment too), and then does not start.
    for (const line of run.stdout.split("\n").filter((l) => l.trim() !== "")) expect(line).toMatch(/^user \S+ /);
    const users = new Map(
      run.stdout
        .split("\n")
        .filter((l) => l.startsWith("user "))
        .map((l) => [l.split(" ")[1]!, l] as const),
    );
    expect(users.get("default")).toMatch(/^user default off\b/);
    const sha = (v: string) => createHash("sha256").update(v).digest("hex");
    for (const name of FLEET_NAMES) {
      const [, user, password] = /^redis:\/\/([^:]+):([^@]+)@/.exec(interpolate(services[name]!.environment!.REDIS_URL!, vars))!;
      expect({ name, line: users.get(user!) }).toEqual({ name, line: expect.stringMatching(new RegExp(`^user ${user} reset on #${sha(password!)} `)) });
    }
    const healthcheckUser = /--user ([a-z-]+)/.exec((services.redis!.healthcheck!.test as string[])[3]!)![1]!;
    expect(users.get(healthcheckUser)).toMatch(new RegExp(`^user ${healthcheckUser} reset on #${sha(vars.ADMIN_REDIS_PASSWORD!)} `));
    // Hashes only: no password is in the file.
    for (const [key, value] of Object.entries(environment)) expect({ key, leaked: run.stdout.includes(value) }).toEqual({ key, leaked: false });
  });

  it("Redis's healthcheck passes only with the default user off and the operator's password right (a real redis-server)", async () => {
    if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) return; // not installed here
    const test = (services.redis!.healthcheck!.test as string[])[3]!;
    const user = /--user ([a-z-]+)/.exec(test)![1]!;
    const dir = mkdtempSync(path.join(tmp, "redis-"));
    // redis-cli on this server's port: the command names none (in compose Redis is alone in its container).
    writeFileSync(path.join(dir, "redis-cli"), `#!/bin/sh\nexec "${spawnSync("sh", ["-c", "command -v redis-cli"], { encoding: "utf8" }).stdout.trim()}" -p "$REDIS_TEST_PORT" "$@"\n`, { mode: 0o755 });
    const password = "0123456789abcdef0123456789abcdef";
    const sha = (v: string) => createHash("sha256").update(v).digest("hex");
    const runWith = async (aclLines: string[], auth: string) => {
      const port = await freePort();
      const aclFile = path.join(dir, `users-${port}.acl`);
      writeFileSync(aclFile, aclLines.join("\n") + "\n", { mode: 0o600 });
      const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--aclfile", aclFile], { stdio: "ignore" });
      try {
        const env = { PATH: `${dir}:${process.env.PATH ?? ""}`, REDIS_TEST_PORT: String(port), REDISCLI_AUTH: auth };
        for (let i = 0; i < 50; i += 1) {
          if (spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout.trim() !== "") break;
          await new Promise((r) => setTimeout(r, 100));
        }
        return spawnSync("sh", ["-c", test], { env, encoding: "utf8" }).status;
      } finally {
        server.kill("SIGKILL");
        await new Promise((r) => server.once("exit", r));
      }
    };
    const operator = `user ${user} on #${sha(password)} ~* &* +@all`;
    expect(await runWith(["user default off", operator], password)).toBe(0);
    expect(await runWith(["user default off", operator], "wrong-password")).not.toBe(0);
    // An ACL file that does not turn the default user off leaves it password-less: unhealthy.
    expect(await runWith([operator], password)).not.toBe(0);
  }, 30_000);

  it("has no hard-coded secret and no fallback value: secrets come from the env file or compose stops", () => {
    // ${X:-default} and ${X-default} would start a fleet on a value from this repository.
    expect(raw.match(/\$\{[A-Za-z0-9_]+:?-[^}]*\}/g)).toBeNull();
    expect(raw.match(/\$[A-Za-z_]/g)).toBeNull(); // only the ${…} form, which the checks below see
    for (const [name, s] of Object.entries(services)) {
      expect({ name, env_file: s.env_file }).toEqual({ name, env_file: undefined });
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        const v = String(value);
        if (/SECRET|_KEY$|PASSWORD|TOKEN|^REDISCLI_AUTH$/.test(key)) expect({ name, key, v }).toEqual({ name, key, v: expect.stringMatching(/^\$\{[A-Z0-9_]+:\?[^}]+\}$/) });
        // A credential inside a URL comes from the env file too.
        if (/^[a-z]+:\/\/[^/]*@/.test(v)) expect({ name, key, v }).toEqual({ name, key, v: expect.stringMatching(/^[a-z]+:\/\/[a-z_-]+:\$\{[A-Z0-9_]+:\?[^}]+\}@/) });
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
      // The code listens on loopback unless told otherwise; Prometheus scrapes over the compose network.
      expect({ name, host: environment.METRICS_HOST }).toEqual({ name, host: "0.0.0.0" });
      // Every service signs or verifies the fleet's messages with the one key.
      expect({ name, key: services[name]!.environment!.FLEET_MESSAGE_KEY }).toEqual({ name, key: expect.stringMatching(/^\$\{FLEET_MESSAGE_KEY:\?[^}]+\}$/) });
    }
    expect([...requiredSomewhere]).toEqual(expect.arrayContaining(["CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "KEY_HASH_SECRET"]));
  });

  it("every fleet service runs the one image with a command the image has", () => {
    const dockerfile = readFileSync(path.join(DOCKER, "Dockerfile"), "utf8");
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    const built = Object.entries(services).filter(([, s]) => s.build);
    expect(built.map(([n]) => n).sort()).toEqual([...FLEET_NAMES, "admin", "migrate", "partition-upkeep", "redis-acl", "vendor-simulator"].sort());
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
    expect(services.migrate!.command).toEqual(["node", "scripts/db-deploy.mjs"]);
    // The partition upkeep: hourly, as the schema owner (the migration's login), after the migration.
    const upkeep = services["partition-upkeep"]!;
    expect(upkeep.command).toEqual(["node", "scripts/partition-upkeep.mjs", "--every", "3600"]);
    expect(upkeep.environment).toEqual({ DATABASE_URL: services.migrate!.environment!.DATABASE_URL });
    expect(upkeep.restart).toBe("unless-stopped");
    expect(upkeep.depends_on).toMatchObject({ migrate: { condition: "service_completed_successfully" } });
    expect(services["redis-acl"]!.command).toEqual(["node", "scripts/redis-acl.mjs", "--out", "/run/redis-acl/users.acl"]);
    // docker/runtime-files.sh puts these in the image (tests/deploy/docker.test.ts runs it).
    const assemble = readFileSync(path.join(DOCKER, "runtime-files.sh"), "utf8");
    expect(assemble).toMatch(/scripts\/prisma\.mjs/);
    expect(assemble).toMatch(/scripts\/db-deploy\.mjs/);
    expect(assemble).toMatch(/scripts\/redis-acl\.mjs/);
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

  it("Prometheus and Grafana are only in the observability profile, the admin CLI only in tools", () => {
    for (const [name, s] of Object.entries(services)) {
      expect({ name, profiles: s.profiles }).toEqual({ name, profiles: observability.includes(name) ? ["observability"] : name === "admin" ? ["tools"] : undefined });
    }
  });

  it("the admin CLI runs as the schema owner with the gateway's key hash secret, and the settings its configuration reads", () => {
    const file = path.join(tmp, "admin.env");
    expect(runEnvScript(file).status).toBe(0);
    const vars = readEnvFile(file);
    const admin = services.admin!;
    expect(admin.command).toEqual(["node", "packages/admin/dist/cli.js"]);
    expect(admin.environment?.DATABASE_URL).toBe(services.migrate!.environment!.DATABASE_URL);
    expect(admin.environment?.KEY_HASH_SECRET).toBe(services.gateway!.environment!.KEY_HASH_SECRET);
    const environment = Object.fromEntries(Object.entries(admin.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
    const properties = AdminEnv.properties as Record<string, unknown>;
    for (const key of Object.keys(environment)) expect({ key, known: key in properties }).toEqual({ key, known: true });
    expect(() => loadAdminConfig(environment)).not.toThrow();
  });

  it("runs the vendor simulator and points the check-workers (and the admin CLI's doctor) at it, so live vendor checks answer", async () => {
    const file = path.join(tmp, "vendor.env");
    expect(runEnvScript(file).status).toBe(0);
    const vars = readEnvFile(file);
    const sim = services["vendor-simulator"]!;
    expect(sim.command).toEqual(["node", "packages/vendor-simulator/dist/main.js"]);
    expect(sim.profiles).toBeUndefined(); // started by `up`, out of the box
    expect(sim.ports).toBeUndefined();
    const simEnv = Object.fromEntries(Object.entries(sim.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
    expect(simEnv).toEqual({ SIM_HOST: "0.0.0.0", SIM_PORT: "9090", SIM_API_KEY: vars.VENDOR_PRIMARY_KEY });
    // The check-worker and the admin CLI: the simulator's compose address and its key, valid for their schemas.
    for (const name of ["check-worker", "admin"]) {
      expect({ name, url: services[name]!.environment!.VENDOR_PRIMARY_URL }).toEqual({ name, url: `http://vendor-simulator:${simEnv.SIM_PORT}` });
      expect({ name, key: services[name]!.environment!.VENDOR_PRIMARY_KEY }).toEqual({ name, key: sim.environment!.SIM_API_KEY });
    }
    expect(loadCheckWorkerConfig({ ...Object.fromEntries(Object.entries(services["check-worker"]!.environment!).map(([k, v]) => [k, interpolate(String(v), vars)])) })).toMatchObject({
      VENDOR_PRIMARY_URL: "http://vendor-simulator:9090",
      VENDOR_PRIMARY_KEY: vars.VENDOR_PRIMARY_KEY,
    });

    // The command and the healthcheck as compose runs them (on a free port here): the
    // simulator listens on SIM_HOST, answers the vendor probe with the key and refuses another.
    const port = await freePort();
    const env = { PATH: process.env.PATH ?? "", ...simEnv, SIM_PORT: String(port) };
    const child = spawn(process.execPath, [path.join(ROOT, sim.command![1]!)], { cwd: ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve, reject) => {
        // On every interface (SIM_HOST 0.0.0.0), where the check-workers' containers reach it.
        child.stdout!.on("data", (d: Buffer) => (String(d).includes(`listening on http://0.0.0.0:${port}`) ? resolve() : undefined));
        child.once("exit", (code) => reject(new Error(`simulator exited ${code}`)));
      });
      const test = sim.healthcheck!.test as string[];
      expect(test.slice(0, 1)).toEqual(["CMD"]);
      const healthy = await new Promise<number | null>((resolve) => spawn(test[1]!, test.slice(2), { env, stdio: "ignore" }).once("exit", resolve));
      expect(healthy).toBe(0);
      const { probeVendorRoute } = await import("@svc/sources");
      await expect(probeVendorRoute(`http://127.0.0.1:${port}`, vars.VENDOR_PRIMARY_KEY!, 2_000)).resolves.toMatchObject({ outcome: "reachable", status: 400 });
      await expect(probeVendorRoute(`http://127.0.0.1:${port}`, "another-key", 2_000)).resolves.toMatchObject({ outcome: "key_refused" });
    } finally {
      child.kill("SIGTERM");
    }
    // Unhealthy when nothing answers.
    const test = sim.healthcheck!.test as string[];
    const down = await new Promise<number | null>((resolve) => spawn(test[1]!, test.slice(2), { env: { ...env, SIM_PORT: String(port) }, stdio: "ignore" }).once("exit", resolve));
    expect(down).not.toBe(0);
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
    const withProfile = run(file, ["--profile", "observability", "--profile", "tools", "config", "--services"]);
    expect(withProfile.status).toBe(0);
    expect(withProfile.stdout.split("\n").filter(Boolean).sort()).toEqual([...Object.keys(services)].sort());

    const empty = path.join(tmp, "empty.env");
    writeFileSync(empty, "");
    const refused = run(empty, ["config", "-q"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(new RegExp(Object.keys(readEnvFile(file)).join("|")));
    expect(refused.stderr).toMatch(/npm run compose:up/);
  });
});
