import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { parse } from "yaml";
import { createTestEnv, serviceEnv, type TestEnv } from "../support/env";

/**
 * The image without a Docker engine: docker/Dockerfile's instructions are held to
 * what the issue asks (init process, healthcheck, numeric user, a runtime stage that
 * copies nothing but the assembled output), and docker/runtime-files.sh, the step
 * that assembles that output, is run for real on this built checkout. The tree it
 * produces must hold no TypeScript, tests or devDependencies, and every service
 * must start from it, answer its healthcheck, and the migration CLI must run.
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
  });

  it("runs under tini as PID 1, installed in the runtime stage", () => {
    expect(execForm(runtime.find((i) => i.op === "ENTRYPOINT"))).toEqual(["/usr/bin/tini", "--"]);
    expect(runtime.some((i) => i.op === "RUN" && /apt-get install\b.*\btini\b/.test(i.args))).toBe(true);
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

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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

    const healthcheck = (port: string) =>
      new Promise<number | null>((resolve) => {
        const hc = spawn(process.execPath, ["docker/healthcheck.cjs"], { cwd: tree, env: { PATH: process.env.PATH ?? "", METRICS_PORT: port }, stdio: "ignore" });
        hc.on("exit", (code) => resolve(code));
      });
    for (const { name } of running) {
      // Ready once consuming/listening; the probe may trail the log line by a moment.
      let code: number | null = null;
      for (let attempt = 0; attempt < 20 && code !== 0; attempt += 1) {
        code = await healthcheck(String(ports.get(name)));
        if (code !== 0) await new Promise((r) => setTimeout(r, 250));
      }
      expect({ name, code }).toEqual({ name, code: 0 });
    }
    // Nothing listening there: unhealthy.
    expect(await healthcheck(String(await freePort()))).toBe(1);

    const exits = await Promise.all(
      running.map(({ child }) => {
        const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
        child.kill("SIGTERM");
        return exited;
      }),
    );
    expect(exits).toEqual([0, 0, 0, 0]);
  }, 120_000);
});
