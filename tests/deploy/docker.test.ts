import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";
import { freePort } from "../observability/support";

/**
 * The image without a Docker engine: docker/Dockerfile's instructions are held to
 * what the issue asks (a pinned base and tini, init process, healthcheck, numeric
 * user, a runtime stage that copies nothing but the assembled output), and
 * docker/runtime-files.sh, the step that assembles that output, is run for real on
 * this built checkout. The tree it produces must hold no TypeScript, tests or
 * devDependencies, and every service must start from it and answer its
 * healthcheck, which must accept no other service's answer; the migration CLI
 * must run.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const;
type ServiceName = (typeof SERVICES)[number];

type Instruction = { op: string; args: string; stage: number };

/** Dockerfile instructions in order, continuation lines joined, comments dropped. */
function dockerfile(): Instruction[] {
  const lines = readFileSync(path.join(ROOT, "docker", "Dockerfile"), "utf8").split("\n");
  const out: Instruction[] = [];
  let stage = -1;
  let pending = "";
  for (const raw of lines) {
    const line = raw.trim();
    if (!pending && (line === "" || line.startsWith("#"))) continue;
    if (pending && line.startsWith("#")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = "";
    const m = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(full);
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    if (op === "FROM") stage += 1;
    out.push({ op, args: m[2]!.trim(), stage });
  }
  return out;
}

const instructions = dockerfile();
const lastStage = Math.max(...instructions.map((i) => i.stage));
const runtime = instructions.filter((i) => i.stage === lastStage);
const build = instructions.filter((i) => i.stage >= 0 && i.stage < lastStage);
const execForm = (i: Instruction | undefined): string[] => JSON.parse(i?.args ?? "null") as string[];

describe("docker/Dockerfile", () => {
  it("has a build stage and a runtime stage from the same base", () => {
    const froms = instructions.filter((i) => i.op === "FROM");
    expect(froms).toHaveLength(2);
    expect(froms[0]!.args).toMatch(/ AS build$/i);
    expect(froms[1]!.args).toMatch(/ AS runtime$/i);
    expect(froms[0]!.args.split(/\s+/)[0]).toBe(froms[1]!.args.split(/\s+/)[0]);
  });

  it("the runtime stage copies only the assembled output of the build stage: no sources", () => {
    const copies = runtime.filter((i) => i.op === "COPY" || i.op === "ADD");
    expect(copies.map((c) => c.args)).toEqual(["--from=build /runtime /app"]);
    // …and that output is what docker/runtime-files.sh assembles, after the build.
    const runs = build.filter((i) => i.op === "RUN").map((i) => i.args);
    const ci = runs.findIndex((r) => /\bnpm ci\b/.test(r));
    const built = runs.findIndex((r) => /\bnpm run build\b/.test(r));
    const assembled = runs.findIndex((r) => /docker\/runtime-files\.sh \/runtime\b/.test(r));
    expect(ci).toBeGreaterThanOrEqual(0);
    expect(built).toBeGreaterThan(ci);
    expect(assembled).toBeGreaterThan(built);
    // The gateway's build copies the guides from docs/: they must be in the build stage before it.
    const guides = build.findIndex((i) => i.op === "COPY" && /^docs\/\*\.md docs\/?$/.test(i.args));
    expect(guides).toBeGreaterThanOrEqual(0);
    expect(build.findIndex((i) => i.op === "RUN" && /\bnpm run build\b/.test(i.args))).toBeGreaterThan(guides);
  });

  it("pins its base image to a supported Node LTS by exact version and digest, and keeps it overridable", () => {
    const arg = instructions.find((i) => i.op === "ARG" && i.stage === -1 && i.args.startsWith("NODE_IMAGE="));
    const m = /^NODE_IMAGE=node:(\d+)\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/.exec(arg?.args ?? "");
    expect({ arg: arg?.args, pinned: m !== null }).toEqual({ arg: arg?.args, pinned: true });
    const major = Number(m![1]);
    // LTS lines are the even majors; 20 left support in April 2026.
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    // …and at least what the packages built into the image declare (the API reference's @scalar/*: >=22).
    const scalar = path.join(ROOT, "node_modules", "@scalar");
    for (const name of readdirSync(scalar)) {
      const engines = (JSON.parse(readFileSync(path.join(scalar, name, "package.json"), "utf8")) as { engines?: { node?: string } }).engines?.node;
      const least = /^>=\s*(\d+)/.exec(engines ?? "");
      if (least) expect({ name, enough: major >= Number(least[1]) }).toEqual({ name, enough: true });
    }
    // Every stage is built from that argument: tests and other bases pass --build-arg NODE_IMAGE.
    for (const from of instructions.filter((i) => i.op === "FROM")) expect(from.args.split(/\s+/)[0]).toBe("${NODE_IMAGE}");
  });

  it("runs under tini as PID 1, installed in the runtime stage at a pinned Debian version", () => {
    expect(execForm(runtime.find((i) => i.op === "ENTRYPOINT"))).toEqual(["/usr/bin/tini", "--"]);
    const version = instructions.find((i) => i.op === "ARG" && i.stage === -1 && i.args.startsWith("TINI_VERSION="));
    expect(version?.args).toMatch(/^TINI_VERSION=\d+\.\d+\.\d+-\d+(\+b\d+)?$/);
    expect(runtime.some((i) => i.op === "ARG" && i.args === "TINI_VERSION")).toBe(true);
    expect(runtime.some((i) => i.op === "RUN" && /apt-get install\b.*"tini=\$\{TINI_VERSION\}"/.test(i.args))).toBe(true);
  });

  it("has a HEALTHCHECK running docker/healthcheck.cjs, which the runtime tree contains", () => {
    const hc = runtime.find((i) => i.op === "HEALTHCHECK");
    expect(hc?.args).toMatch(/CMD \["node", "docker\/healthcheck\.cjs"\]$/);
    expect(hc?.args).toMatch(/--interval=\d+s/);
    expect(hc?.args).toMatch(/--timeout=\d+s/);
  });

  it("runs as a numeric, non-root user (Kubernetes' runAsNonRoot can verify it)", () => {
    const users = runtime.filter((i) => i.op === "USER");
    expect(users).toHaveLength(1);
    const [uid, gid] = users[0]!.args.split(":");
    expect(uid).toMatch(/^[1-9]\d*$/);
    expect(gid ?? uid).toMatch(/^[1-9]\d*$/);
  });

  it("runs the gateway by default, as the compose file does", () => {
    const cmd = execForm(runtime.find((i) => i.op === "CMD"));
    expect(cmd).toEqual(["node", "--v8-pool-size=1", "services/gateway/dist/main.js"]);
    const compose = parse(readFileSync(path.join(ROOT, "docker", "compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, { command?: string[] }>;
    };
    expect(compose.services.gateway?.command).toEqual(cmd);
  });
});

type HealthcheckModule = {
  DEFAULT_PORTS: Record<string, number>;
  serviceOfCommand(args: string[]): string | null;
};

describe("docker/healthcheck.cjs: which service it checks", () => {
  const hc = require(path.join(ROOT, "docker", "healthcheck.cjs")) as HealthcheckModule;

  it("knows each service's default operations port, as the code defaults it", () => {
    expect(hc.DEFAULT_PORTS).toEqual({ gateway: 9464, "check-worker": 9465, "billing-ledger": 9466, "webhook-dispatcher": 9467 });
  });

  it("reads the service from PID 1's command line (tini, then node and the service's entry point)", () => {
    expect(hc.serviceOfCommand(["/usr/bin/tini", "--", "node", "--v8-pool-size=1", "services/gateway/dist/main.js"])).toBe("gateway");
    for (const name of SERVICES) expect(hc.serviceOfCommand(["/usr/bin/tini", "--", "node", `/app/services/${name}/dist/main.js`])).toBe(name);
    expect(hc.serviceOfCommand(["sh", "-c", "exec node services/billing-ledger/dist/main.js"])).toBe("billing-ledger");
    // No service, an unknown one, or two: it cannot tell.
    expect(hc.serviceOfCommand(["/usr/bin/tini", "--", "node", "scripts/db-deploy.mjs"])).toBeNull();
    expect(hc.serviceOfCommand(["node", "services/other/dist/main.js"])).toBeNull();
    expect(hc.serviceOfCommand(["node", "services/gateway/dist/main.js", "services/check-worker/dist/main.js"])).toBeNull();
    expect(hc.serviceOfCommand(["node", "services/gateway/dist/main.js.bak"])).toBeNull();
  });
});

/** Runs `docker/healthcheck.cjs` from `cwd` with only `env` (and PATH); its exit code and what it printed. */
function runHealthcheck(cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const hc = spawn(process.execPath, ["docker/healthcheck.cjs"], { cwd, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    hc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    hc.stderr.on("data", (d: Buffer) => (out += d.toString()));
    hc.on("close", (code) => resolve({ code, out }));
  });
}

function walk(dir: string, skip: (p: string) => boolean, found: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (skip(p)) continue;
    if (entry.isDirectory()) walk(p, skip, found);
    else found.push(p);
  }
  return found;
}

describe("docker/runtime-files.sh: the runtime stage's tree", () => {
  let tree = "";
  let files: string[] = [];
  let env: TestEnv;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    tree = mkdtempSync(path.join(os.tmpdir(), "svc-runtime-"));
    const result = spawnSync("sh", [path.join(ROOT, "docker", "runtime-files.sh"), tree], { cwd: ROOT, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`runtime-files.sh failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
    const rel = (p: string) => path.relative(tree, p);
    files = walk(tree, (p) => rel(p) === "node_modules").map(rel);
    env = await createTestEnv();
  }, 240_000);

  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (tree) rmSync(tree, { recursive: true, force: true });
  });

  it("holds no TypeScript, no tests and no build state outside node_modules", () => {
    expect(files.filter((f) => /\.(c|m)?tsx?$/.test(f))).toEqual([]);
    expect(files.filter((f) => /(^|\/)(src|tests?|__tests__|testing)\//.test(f))).toEqual([]);
    expect(files.filter((f) => /\.test\.js(\.map)?$|\.tsbuildinfo$|(^|\/)tsconfig[^/]*\.json$|(^|\/)jest\.config/.test(f))).toEqual([]);
    expect(files.filter((f) => /^(bench|docs|k8s|tests)\//.test(f))).toEqual([]);
    // Prisma's CLI configuration is there, compiled.
    expect(files).toContain("prisma.config.mjs");
  });

  it("holds the dist/ of every service and package, the gateway's assets, and the migrations", () => {
    for (const group of ["services", "packages"]) {
      for (const name of readdirSync(path.join(ROOT, group))) {
        const pkg = path.join(ROOT, group, name, "package.json");
        if (!existsSync(pkg)) continue;
        expect(files).toContain(`${group}/${name}/package.json`);
        const main = (JSON.parse(readFileSync(pkg, "utf8")) as { main?: string }).main;
        if (main) expect(files).toContain(path.posix.join(group, name, main));
      }
    }
    for (const s of SERVICES) expect(files).toContain(`services/${s}/dist/main.js`);
    expect(files).toContain("services/gateway/dist/bulk/intake-worker.js");
    expect(files).toContain("services/gateway/assets/get-test-key.html");
    expect(files).toContain("services/gateway/dist/vendor/scalar-api-reference.js");
    // The guides served under /docs, copied into the gateway's dist by its build.
    expect(files).toContain("services/gateway/dist/guides/test-mode.md");
    expect(files).toContain("docker/healthcheck.cjs");
    expect(files).toContain("scripts/prisma.mjs");
    const migrations = readdirSync(path.join(ROOT, "prisma", "migrations")).filter((m) => statSync(path.join(ROOT, "prisma", "migrations", m)).isDirectory());
    expect(migrations.length).toBeGreaterThan(0);
    for (const m of migrations) expect(files).toContain(`prisma/migrations/${m}/migration.sql`);
  });

  it("every command the compose file runs exists in the tree", () => {
    const compose = parse(readFileSync(path.join(ROOT, "docker", "compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, { build?: unknown; command?: string[] }>;
    };
    const fromImage = Object.values(compose.services).filter((s) => s.build);
    expect(fromImage.length).toBeGreaterThanOrEqual(5);
    for (const s of fromImage) {
      const script = s.command?.find((a, i) => i > 0 && !a.startsWith("-"));
      expect(s.command?.[0]).toBe("node");
      expect(files).toContain(script);
    }
  });

  it("node_modules has the production dependencies and none of the development ones", () => {
    const nm = path.join(tree, "node_modules");
    for (const dep of ["express", "bullmq", "ioredis", "pg", "prom-client", "@prisma/client", "prisma", ".prisma/client", "@opentelemetry/api"]) {
      expect(existsSync(path.join(nm, dep))).toBe(true);
    }
    for (const dep of ["jest", "typescript", "turbo", "@swc/core", "esbuild", "@scalar/api-reference", "supertest", "playwright-core", "autocannon"]) {
      expect({ dep, present: existsSync(path.join(nm, dep)) }).toEqual({ dep, present: false });
    }
  });

  it("the migration CLI runs from the tree with the compiled config", () => {
    const result = spawnSync(process.execPath, ["scripts/prisma.mjs", "migrate", "status"], {
      cwd: tree,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: os.tmpdir(), DATABASE_URL: env.databaseUrl, NODE_ENV: "production" },
    });
    expect({ status: result.status, out: result.stdout + result.stderr }).toEqual({ status: 0, out: expect.stringMatching(/Database schema is up to date/) });
  }, 60_000);

  it("every service starts from the tree in production mode and its healthcheck passes", async () => {
    const ports = new Map<ServiceName, number>();
    for (const s of SERVICES) ports.set(s, await freePort());
    const started = SERVICES.map(async (name) => {
      const args = name === "gateway" ? ["--v8-pool-size=1", `services/${name}/dist/main.js`] : [`services/${name}/dist/main.js`];
      const child = spawn(process.execPath, args, {
        cwd: tree,
        env: {
          PATH: process.env.PATH ?? "",
          ...serviceEnv(env, { NODE_ENV: "production", LOG_LEVEL: "info", METRICS_PORT: String(ports.get(name)), PORT: "0" }),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let out = "";
      child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
      const ready = name === "gateway" ? /gateway listening/ : /"consuming"/;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name} did not start from the runtime tree:\n${out}`)), 40_000);
        const check = () => {
          if (!ready.test(out)) return;
          clearTimeout(timer);
          resolve();
        };
        child.stdout?.on("data", check);
        child.stderr?.on("data", check);
        child.on("exit", (code) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (${code}) starting from the runtime tree:\n${out}`));
        });
      });
      return { name, child };
    });
    const running = await Promise.all(started);

    // This test's PID 1 runs no service, so the check is told which one it is for.
    const healthcheck = (env: Record<string, string>) => runHealthcheck(tree, env);
    for (const { name } of running) {
      // Ready once consuming/listening; the probe may trail the log line by a moment.
      let result = { code: null as number | null, out: "" };
      for (let attempt = 0; attempt < 20 && result.code !== 0; attempt += 1) {
        result = await healthcheck({ HEALTHCHECK_SERVICE: name, METRICS_PORT: String(ports.get(name)) });
        if (result.code !== 0) await new Promise((r) => setTimeout(r, 250));
      }
      expect({ name, ...result }).toEqual({ name, code: 0, out: "" });
    }
    // Another service answering ready on the port probed is not this one being healthy.
    for (const [i, { name }] of running.entries()) {
      const other = running[(i + 1) % running.length]!.name;
      const result = await healthcheck({ HEALTHCHECK_SERVICE: name, METRICS_PORT: String(ports.get(other)) });
      expect({ name, other, ...result }).toEqual({ name, other, code: 1, out: expect.stringContaining(`answered by ${other}, not by ${name}`) });
    }
    // Something that is no fleet service answering 200: unhealthy.
    const impostor = createHttpServer((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end('{"status":"ready"}'));
    await new Promise<void>((resolve) => impostor.listen(0, "127.0.0.1", resolve));
    const impostorPort = String((impostor.address() as { port: number }).port);
    expect(await healthcheck({ HEALTHCHECK_SERVICE: "gateway", METRICS_PORT: impostorPort })).toEqual({ code: 1, out: expect.stringMatching(/not a fleet service/) });
    impostor.close();
    // Nothing listening there: unhealthy.
    expect((await healthcheck({ HEALTHCHECK_SERVICE: "gateway", METRICS_PORT: String(await freePort()) })).code).toBe(1);
    // Not told, and this PID 1 names no service: it says so rather than guessing.
    expect(await healthcheck({ METRICS_PORT: String(ports.get("gateway")) })).toEqual({ code: 1, out: expect.stringMatching(/cannot tell which service/) });

    const exits = await Promise.all(
      running.map(({ child }) => {
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
        child.kill("SIGTERM");
        return exited;
      }),
    );
    expect(exits).toEqual([0, 0, 0, 0]);
  }, 120_000);

  // As in a container: PID 1's command names the service, METRICS_PORT is not set,
  // and the network may hold other services' ports (host networking). A PID and
  // network namespace of its own (root or user namespaces needed; skipped without).
  it("in a container, checks the service PID 1 runs, on that service's port only, and refuses another service's answer", () => {
    const isolate = ["--net", "--pid", "--fork", "--mount-proc"];
    if (spawnSync("unshare", [...isolate, "true"], { stdio: "ignore" }).status !== 0) return;
    const harness = path.join(tree, "..", `${path.basename(tree)}-pid1.cjs`);
    writeFileSync(
      harness,
      `// PID 1 of its own namespaces; its command line names the service (argv[3]).
const { execFileSync, execFile } = require("node:child_process");
const path = require("node:path");
const [tree, , layout] = process.argv.slice(2);
execFileSync("ip", ["link", "set", "lo", "up"]);
const { startOpsServer } = require(path.join(tree, "packages/metrics/dist/index.js"));
const source = { metrics: async () => ({ contentType: "text/plain", body: "" }), readiness: async () => ({ ready: true, checks: {} }) };
(async () => {
  for (const { port, service } of JSON.parse(layout)) await startOpsServer({ port, host: "127.0.0.1", service, source, draining: () => false });
  // Asynchronously: the ops servers above answer from this process's event loop.
  execFile(process.execPath, [path.join(tree, "docker/healthcheck.cjs")], { env: { PATH: process.env.PATH } }, (err, stdout, stderr) => {
    process.stdout.write(JSON.stringify({ code: err ? err.code : 0, out: stdout + stderr }));
    process.exit(0);
  });
})();
`,
    );
    try {
      /** The healthcheck's answer in a container running `service`, where `layout` answers ready. */
      const inContainer = (service: ServiceName, layout: Array<{ port: number; service: ServiceName }>) => {
        const r = spawnSync("unshare", [...isolate, process.execPath, harness, tree, `services/${service}/dist/main.js`, JSON.stringify(layout)], { encoding: "utf8", timeout: 20_000 });
        if (r.status !== 0) throw new Error(`harness failed (${r.status}): ${r.stdout}${r.stderr}`);
        return JSON.parse(r.stdout) as { code: number; out: string };
      };
      expect(inContainer("gateway", [{ port: 9464, service: "gateway" }])).toEqual({ code: 0, out: "" });
      expect(inContainer("check-worker", [{ port: 9464, service: "gateway" }, { port: 9465, service: "check-worker" }])).toEqual({ code: 0, out: "" });
      // Another fleet's check-worker holds the gateway's port: not the gateway being healthy.
      expect(inContainer("gateway", [{ port: 9464, service: "check-worker" }])).toEqual({ code: 1, out: expect.stringContaining("answered by check-worker, not by gateway") });
      // Nothing on the gateway's port: unhealthy, however ready the neighbours' ports are.
      expect(inContainer("gateway", [9465, 9466, 9467].map((port, i) => ({ port, service: SERVICES[i + 1]! })))).toEqual({
        code: 1,
        out: expect.stringContaining("nothing answers on 127.0.0.1:9464"),
      });
    } finally {
      rmSync(harness, { force: true });
    }
  }, 60_000);
});
