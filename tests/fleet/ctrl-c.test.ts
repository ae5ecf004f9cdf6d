import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import request from "supertest";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, serviceDatabaseUrl, serviceEnv, serviceRedisUrl, type TestEnv } from "../support/env";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";

/**
 * Ctrl-C under `npm run up` as a terminal delivers it: SIGINT to every process of
 * the foreground process group at once (npm, and the runner under it, which npm
 * also passes the signal on to). The fleet runner is started through npm
 * (`npm run start:fleet`, the same runner `npm run up` ends in) as the leader of
 * a process group of its own, standing in for the terminal's foreground group.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const;

let env: TestEnv;
let store: Store;
let key: TestKey;
let runner: ChildProcess | undefined;
/** Each test its own database and queues: a fleet of its own. */
beforeEach(async () => {
  await store?.close();
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  key = await accountWithKey(store, env.keyHashSecret);
});
afterEach(async () => {
  // Whatever happened, leave no fleet behind.
  if (runner?.pid && runner.exitCode === null) {
    try {
      process.kill(-runner.pid, "SIGTERM"); // the runner stops its services
    } catch {
      /* gone */
    }
  }
});
afterAll(async () => store?.close());

type LogLine = { service: string; pid?: number; msg?: string; raw: string };

/** The runner's output: `[service]   <the service's line>`, JSON for the four services. */
function parse(output: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of output.split("\n")) {
    const m = /^\[([\w-]+)\]\s+(.*)$/.exec(raw);
    if (!m) continue;
    let json: { pid?: number; msg?: string } = {};
    try {
      json = JSON.parse(m[2]!) as typeof json;
    } catch {
      /* a plain line */
    }
    lines.push({ service: m[1]!, pid: json.pid, msg: json.msg, raw });
  }
  return lines;
}

/**
 * Starts the fleet with `command`, puts a request in flight, delivers Ctrl-C with
 * `interrupt`, and checks every service stopped once and cleanly. Resolves with
 * how the started process exited, and the output seen by then.
 */
async function ctrlC(command: string, args: string[], interrupt: (pid: number) => void, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const dotEnvExisted = existsSync(path.join(ROOT, ".env.local"));
  runner = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...serviceEnv(env, {
        LOG_LEVEL: "info",
        PORT: "0",
        // Two gateway processes: the cluster primary passes the runner's one SIGTERM on.
        WEB_CONCURRENCY: "2",
        // No live lookups here: no vendor simulator (its fixed port could collide with other tests).
        VENDOR_PRIMARY_URL: "http://127.0.0.1:9",
        VENDOR_PRIMARY_KEY: "unused",
        SWEEP_INTERVAL_MS: "60000",
        // Each service as itself: the run's roles and Redis users (the runner's own defaults are npm run up's).
        ...Object.fromEntries(SERVICES.flatMap((s) => [[`${s.toUpperCase().replaceAll("-", "_")}_DATABASE_URL`, serviceDatabaseUrl(env.databaseUrl, s)], [`${s.toUpperCase().replaceAll("-", "_")}_REDIS_URL`, serviceRedisUrl(env.redisUrl, s)]])),
        ...extraEnv,
      }),
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // leader of its own process group, like a terminal's foreground job
  });
  let out = "";
  runner.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  runner.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) =>
    // "close": the output is all in too (the runner holds the pipes until it exits).
    runner!.on("close", (code, signal) => resolve({ code, signal, out })),
  );

  // Up: both gateway processes listen, the three workers consume.
  const deadline = Date.now() + 60_000;
  const isUp = () => {
    const lines = parse(out);
    const listening = lines.filter((l) => l.service === "gateway" && l.msg === "gateway listening").length;
    return listening >= 2 && SERVICES.slice(1).every((s) => lines.some((l) => l.service === s && l.msg === "consuming"));
  };
  while (!isUp()) {
    if (runner.exitCode !== null || Date.now() > deadline) throw new Error(`the fleet did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const port = /"port":(\d+)/.exec(out)?.[1];
  const url = `http://127.0.0.1:${port}`;

  // In flight: a request held in `wait` (the gateway wakes it to answer on shutdown).
  const created = await request(url).post("/v1/lookup").set(bearer(key.key)).send({ numbers: ["+12025550109"], checks: ["spam"], wait: 0 });
  expect(created.status).toBe(202);
  const held = request(url).get(`/v1/lookups/${created.body.id}?wait=30`).set(bearer(key.key)).then((r) => r);
  await new Promise((r) => setTimeout(r, 300));

  interrupt(runner.pid!);
  const started = Date.now();
  const answered = await held;
  expect(answered.status).toBe(200);
  expect(answered.body.id).toBe(created.body.id);
  const result = await exited;
  expect(Date.now() - started).toBeLessThan(15_000);

  const lines = parse(out);
  expect(out).not.toMatch(/second signal/);
  expect(out).not.toMatch(/again: killing|still running after|stopped with/);
  for (const service of SERVICES) {
    const pids = [...new Set(lines.filter((l) => l.service === service && l.pid !== undefined).map((l) => l.pid))];
    // The gateway: its two processes (the cluster primary writes no JSON lines).
    expect(pids.length).toBe(service === "gateway" ? 2 : 1);
    for (const pid of pids) {
      const mine = lines.filter((l) => l.service === service && l.pid === pid);
      expect(mine.filter((l) => l.msg === "shutting down")).toHaveLength(1);
      expect(mine.filter((l) => l.msg === "shutdown complete")).toHaveLength(1);
      // The reason is the one SIGTERM (the runner's, or for the gateway's processes their primary's), never the terminal's SIGINT.
      expect(mine.find((l) => l.msg === "shutting down")!.raw).toContain('"reason":"SIGTERM"');
    }
  }
  const workers = lines.filter((l) => l.service === "check-worker");
  expect(workers.some((l) => l.raw.includes('"step":"finish running jobs"'))).toBe(true);
  // Every service exited 0 (else: "stopped with ..." above, and another last line).
  expect(result.out).toContain("The fleet stopped.\n");
  // The secrets came from the environment: the runner neither wrote nor created .env.local.
  expect(existsSync(path.join(ROOT, ".env.local"))).toBe(dotEnvExisted);
  return result;
}

it("one Ctrl-C under npm run stops every service with one SIGTERM each: each shuts down once, finishes in-flight work and exits 0", async () => {
  // The terminal's SIGINT to the whole foreground group: npm, its shell, the runner.
  const result = await ctrlC("npm", ["run", "--silent", "start:fleet"], (pid) => process.kill(-pid, "SIGINT"));
  // npm exits after the fleet stopped, as any program interrupted from a shell does (status 130 there).
  expect(result.signal === "SIGINT" || result.code === 0).toBe(true);
  // Without SMTP_HELO_NAME the banner says live e-mail checks cannot be answered yet.
  expect(result.out).toContain("Live e-mail checks need SMTP_HELO_NAME");
}, 90_000);

it("the runner takes the terminal's Ctrl-C and npm's copy of it as one request, and exits 0 once every service has", async () => {
  const result = await ctrlC(process.execPath, ["scripts/fleet.mjs"], (pid) => {
    process.kill(-pid, "SIGINT");
    // What npm does when its shell execs the runner: pass the same Ctrl-C on to it.
    process.kill(pid, "SIGINT");
  }, { SMTP_HELO_NAME: "probe.validation.test" });
  expect(result.code).toBe(0);
  // With it, the banner says the probe runs (it used to claim 503 either way).
  expect(result.out).toContain("Live e-mail checks probe mail servers as probe.validation.test");
  expect(result.out).not.toContain("answer 503");
}, 90_000);
