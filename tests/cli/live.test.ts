import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client, type Job } from "@svc/sdk";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";
import { CONTROL, expectNoKey, parsed, SVC, svc, svcInTty } from "./run";
import { routesKey } from "@svc/sources";

/**
 * `svc` on live jobs finished by a real check-worker and billing-ledger (vendor
 * simulator behind them): the progress bar appears only on a terminal (a real
 * pseudo-terminal through util-linux `script`), plain progress lines elsewhere;
 * exit codes of waited-for jobs; cancel of a running job; max_cost refusals.
 */
let gw: TestGateway;
let workers: LiveWorkers;
let k: TestKey;
let api: Client;
const numbers = spacedNumbers(11);
const dir = mkdtempSync(path.join(tmpdir(), "svc-cli-live-"));

beforeAll(async () => {
  gw = await startTestGateway({ config: { JOB_CHUNK_ROWS: "20" } });
  workers = await startLiveWorkers(gw.env, { CONCURRENCY: "1" });
  await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
  k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 100_000_000n });
  api = new Client({ apiKey: k.key, baseUrl: gw.url });
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await gw?.close();
});
beforeEach(() => Object.assign(workers.sim.settings, { latencyMs: 0, failureRate: 0, outage: false, hang: false }));

function listFile(n: number): string {
  const file = path.join(dir, `list-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, `${numbers(n).join("\n")}\n`);
  return file;
}

describe("jobs create --wait and jobs watch on live jobs", () => {
  it("on a terminal: a live progress bar on the terminal that moves, then the finished job; exit 0", async () => {
    workers.sim.settings.latencyMs = 60;
    const tty = await svcInTty(["jobs", "create", listFile(120), "--checks", "whatsapp", "--wait"], { key: k.key, baseUrl: gw.url });
    expect(tty.code).toBe(0);
    const screen = tty.stdout;
    // cli-progress frames: hidden cursor, carriage-return redraws, the bar with job id, status and counts.
    expect(screen).toContain("\x1b[?25l");
    const frames = [...screen.matchAll(/job_\w+ (queued|running|completed) \[[█░]+\] (\d+)% \| (\d+)\/(\d+) checks/g)];
    expect(frames.length).toBeGreaterThan(1);
    expect(frames.at(-1)?.slice(1, 5)).toEqual(["completed", "100", "120", "120"]);
    expect(new Set(frames.map((f) => f[3])).size).toBeGreaterThan(1); // it moved while the job ran
    expect(screen).toMatch(/status\s+completed/);
    expectNoKey(k.key, tty.stdout, tty.stderr);
  }, 60_000);

  it("off a terminal: no bar and no control characters, plain progress lines on stderr, the job on stdout", async () => {
    workers.sim.settings.latencyMs = 20;
    const piped = await svc(["jobs", "create", listFile(60), "--checks", "whatsapp", "--wait", "--json"], { key: k.key, baseUrl: gw.url, timeoutMs: 60_000 });
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toMatch(CONTROL);
    expect(piped.stderr).not.toMatch(/[█░]/);
    expect(piped.stderr).toMatch(/^job_\w+: completed, 60\/60 checks \(100 %\)$/m);
    const job = parsed<Job>(piped);
    expect(job).toMatchObject({ status: "completed", progress: { total: 60, done: 60 } });
    // The API's job as read back (cost settles after the fact, on the ledger's time).
    expect({ ...job, cost: null }).toEqual({ ...(await api.jobs.get(job.id)), cost: null });

    const quiet = await svc(["jobs", "create", listFile(10), "--checks", "whatsapp", "--wait", "--no-progress"], { key: k.key, baseUrl: gw.url, timeoutMs: 60_000 });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toMatch(/checks \(/);
  }, 60_000);

  it("watch follows a running job (bar on a terminal); a cancelled job makes watch exit 1", async () => {
    workers.sim.settings.latencyMs = 40;
    const job = await api.jobs.create({ numbers: numbers(80), checks: ["whatsapp"] });
    const tty = await svcInTty(["jobs", "watch", job.id], { key: k.key, baseUrl: gw.url });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(new RegExp(`${job.id} \\w+ \\[[█░]+\\] \\d+% \\| \\d+/80 checks`));

    workers.sim.settings.latencyMs = 1_000;
    const slow = await api.jobs.create({ numbers: numbers(200), checks: ["whatsapp"] });
    const cancelled = await svc(["jobs", "cancel", slow.id, "--json"], { key: k.key, baseUrl: gw.url });
    expect(cancelled.code).toBe(0);
    expect(parsed<Job>(cancelled).id).toBe(slow.id);
    workers.sim.settings.latencyMs = 0;
    const watched = await svc(["jobs", "watch", slow.id], { key: k.key, baseUrl: gw.url, timeoutMs: 60_000 });
    expect(watched.code).toBe(1);
    expect(watched.stdout).toMatch(/^status\s+cancelled$/m);
  }, 90_000);

  it("Ctrl-C while waiting: exit 130, says how to pick it up again, and the job keeps running", async () => {
    workers.sim.settings.latencyMs = 1_000;
    const job = await api.jobs.create({ numbers: numbers(100), checks: ["whatsapp"] });
    const child = spawn(process.execPath, [SVC, "jobs", "watch", job.id], { env: { PATH: process.env.PATH ?? "", SVC_API_KEY: k.key, SVC_BASE_URL: gw.url }, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    await eventually(async () => /job_\w+: (queued|running)/.test(stderr), 10_000, "watch started");
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toContain(`Stopped waiting; ${job.id} keeps running. Follow it with: svc jobs watch ${job.id}`);
    expect((await api.jobs.get(job.id)).status).toMatch(/^(queued|running)$/);
    await api.jobs.cancel(job.id);
    workers.sim.settings.latencyMs = 0;
  }, 30_000);

  it("--max-cost below the job's maximum cost: the API refuses it (402 cost_limit_exceeded), exit 3", async () => {
    const r = await svc(["jobs", "create", listFile(50), "--checks", "whatsapp", "--max-cost", "0.000001"], { key: k.key, baseUrl: gw.url });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/code: cost_limit_exceeded \(HTTP 402\), param: max_cost\.amount/);
    const asJson = await svc(["--json", "lookup", "--checks", "whatsapp", "--max-cost", "0.000001", ...numbers(3)], { key: k.key, baseUrl: gw.url });
    expect(asJson.code).toBe(3);
    expect(JSON.parse(asJson.stderr).error.code).toBe("cost_limit_exceeded");
  });
});
