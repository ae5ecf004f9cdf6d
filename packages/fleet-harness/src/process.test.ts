import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Fleet } from "./fleet";
import { httpOk, startProcess } from "./process";

/**
 * Real processes (small node scripts written for each test): readiness from a log line
 * or a probe, start-up failures with the output, one SIGTERM, the grace period and the
 * process group.
 */
const dir = mkdtempSync(path.join(tmpdir(), "fleet-harness-"));
let seq = 0;
function script(source: string): string {
  const file = path.join(dir, `s${(seq += 1)}.js`);
  writeFileSync(file, source);
  return file;
}
const env = { PATH: process.env.PATH ?? "" };
/** Running (a zombie nobody reaps in a container without an init counts as gone). */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
};

/** Says `ready`, counts the SIGTERMs it gets, exits 0 on the first after a short drain. */
const SERVICE_LIKE = `
let terms = 0;
process.on("SIGTERM", () => { terms += 1; console.log("SIGTERM " + terms); setTimeout(() => process.exit(0), 150); });
console.log("starting");
setTimeout(() => console.log(JSON.stringify({ msg: "ready", port: 1234 })), 50);
setInterval(() => {}, 1000);
`;

it("resolves once a line says it is ready, keeps the output, and stops it with one SIGTERM whatever is asked", async () => {
  const p = await startProcess({ name: "svc", script: script(SERVICE_LIKE), env, ready: /"msg":"ready"/ });
  expect(p.output()).toContain("starting");
  expect(p.running()).toBe(true);
  p.terminate();
  p.terminate();
  expect(await p.stop()).toBe(0);
  expect(p.output().match(/SIGTERM \d/g)).toEqual(["SIGTERM 1"]);
  expect(p.running()).toBe(false);
});

it("fails the start with the output when the process exits first", async () => {
  const file = script(`console.error("bad setting: FOO"); process.exit(3);`);
  await expect(startProcess({ name: "broken", script: file, env, ready: /never/ })).rejects.toThrow(/broken exited \(3\) during start-up:\nbad setting: FOO/);
});

it("fails the start when it is not ready in time, and kills what it started", async () => {
  let pid = 0;
  const start = startProcess({ name: "slow", script: script(`setInterval(() => {}, 1000);`), env, ready: /never/, readyTimeoutMs: 300, onSpawn: (p) => (pid = p.pid) });
  await expect(start).rejects.toThrow(/slow did not start within 300 ms/);
  await new Promise((r) => setTimeout(r, 100));
  expect(alive(pid)).toBe(false);
});

it("is ready when a probe says so (a service at LOG_LEVEL warn writes no ready line)", async () => {
  const file = script(`
    const server = require("node:http").createServer((_, res) => res.end("ok"));
    setTimeout(() => server.listen(Number(process.env.PORT), "127.0.0.1"), 200);
    process.on("SIGTERM", () => server.close(() => process.exit(0)));
  `);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const p = await startProcess({ name: "http", script: file, env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "inherit", ready: httpOk(`http://127.0.0.1:${port}/`) });
  expect(await fetch(`http://127.0.0.1:${port}/`).then((r) => r.text())).toBe("ok");
  expect(await p.stop()).toBe(0);
});

it("SIGKILLs, after the grace period, a process group that does not stop on SIGTERM", async () => {
  // A process that ignores SIGTERM, with a child of its own (as the gateway's cluster processes).
  const file = script(`
    process.on("SIGTERM", () => console.log("ignored"));
    const child = require("node:child_process").spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
    console.log("child " + child.pid);
    setInterval(() => {}, 1000);
  `);
  const p = await startProcess({ name: "stubborn", script: file, env, detached: true, ready: /child \d+/ });
  const grandchild = Number(/child (\d+)/.exec(p.output())![1]);
  const t0 = Date.now();
  expect(await p.stop({ graceMs: 300 })).toBeNull();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  await new Promise((r) => setTimeout(r, 100));
  expect(alive(grandchild)).toBe(false);
});

it("passes each line on as it comes, with the last one that has no newline", async () => {
  const lines: string[] = [];
  const p = await startProcess({ name: "lines", script: script(`process.stdout.write("one\\ntw"); setTimeout(() => process.stdout.write("o\\nthree"), 50);`), env, keep: 0, onLine: (l) => lines.push(l) });
  expect(await p.exited).toBe(0);
  await new Promise((r) => setTimeout(r, 50));
  expect(lines).toEqual(["one", "two", "three"]);
  expect(p.output()).toBe("");
});

it("a fleet stops its members together, one SIGTERM each, and forgets those that exited", async () => {
  const fleet = new Fleet();
  const [a, b] = await Promise.all([1, 2].map(() => fleet.start({ name: "member", script: script(SERVICE_LIKE), env, ready: /"msg":"ready"/ })));
  expect(fleet.running).toHaveLength(2);
  await fleet.stop({ graceMs: 5_000 });
  expect([await a!.exited, await b!.exited]).toEqual([0, 0]);
  expect(fleet.running).toHaveLength(0);
  expect(a!.output().match(/SIGTERM \d/g)).toEqual(["SIGTERM 1"]);
});

it("a fail-fast fleet ends this process when a member exits unasked, and not when it was told to stop", async () => {
  const exit = jest.spyOn(process, "exit").mockImplementation((() => undefined) as never);
  const stderr = jest.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    const fleet = new Fleet({ failFast: true });
    const stopped = await fleet.start({ name: "told", script: script(SERVICE_LIKE), env, ready: /"msg":"ready"/ });
    await stopped.stop();
    expect(exit).not.toHaveBeenCalled();
    const crashing = await fleet.start({ name: "second worker", script: script(`console.log("METRICS_PORT 9465 is already in use"); process.exit(1);`), env });
    await crashing.exited;
    for (let i = 0; i < 50 && exit.mock.calls.length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(exit).toHaveBeenCalledWith(1);
    expect(stderr.mock.calls.map((c) => String(c[0])).join("")).toMatch(/second worker \(pid \d+\) exited \(1\) unasked: stopping\.\nMETRICS_PORT 9465 is already in use/);
  } finally {
    exit.mockRestore();
    stderr.mockRestore();
  }
});
