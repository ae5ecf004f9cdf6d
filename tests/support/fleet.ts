import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { serviceEnv, type TestEnv } from "./env";

const ROOT = path.resolve(__dirname, "..", "..");

/** Children still running when the test process exits are killed, and never keep it alive. */
const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});
export type ServiceName = "gateway" | "check-worker" | "billing-ledger" | "webhook-dispatcher";

export type RunningService = {
  name: ServiceName;
  child: ChildProcess;
  output: () => string;
  /** Base URL, for the gateway (it listens on a free port). */
  url: string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
};

/**
 * Starts a built service (`node services/<name>/dist/main.js`) as a real process
 * in `env`, and resolves once its log says it is ready.
 */
export async function startService(name: ServiceName, env: TestEnv, extra: Record<string, string> = {}, readyPattern?: RegExp): Promise<RunningService> {
  const child = spawn(process.execPath, [path.join(ROOT, "services", name, "dist", "main.js")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { LOG_LEVEL: "info", ...extra }, name) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  child.unref();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const ready = readyPattern ?? (name === "gateway" ? /gateway listening/ : /"consuming"/);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out}`)), 20_000);
    const onData = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.on("exit", () => {
      clearTimeout(timer);
      reject(new Error(`${name} exited during start-up:\n${out}`));
    });
  });
  const port = /"port":(\d+)/.exec(out)?.[1];
  return {
    name,
    url: port ? `http://127.0.0.1:${port}` : "",
    child,
    output: () => out,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const code = await exited;
      assertNoPrivilegeRefused(name, out);
      return code;
    },
  };
}

/**
 * Services run as their own database role and Redis user: a statement or command their
 * grants do not cover fails, and some such failures are only logged (a rate limiter that
 * lets requests through, a sweep retried later). Any of them in a service's output fails
 * the test that ran it.
 */
const REFUSED = /NOPERM|can't run this command|permission denied for|must be owner of/;

function assertNoPrivilegeRefused(name: ServiceName, output: string): void {
  const lines = output.split("\n").filter((line) => REFUSED.test(line));
  if (lines.length > 0) throw new Error(`${name} was refused something its role or Redis user should allow:\n${lines.slice(0, 5).join("\n")}`);
}
