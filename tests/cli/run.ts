import { spawn } from "node:child_process";
import path from "node:path";

/** The built CLI, run as users run it: `node packages/cli/bin/svc.js …` in a child process. */
export const SVC = path.resolve(__dirname, "..", "..", "packages", "cli", "bin", "svc.js");

export type Run = { code: number | null; stdout: string; stderr: string };

export type RunOptions = {
  /** SVC_API_KEY (omitted when undefined). */
  key?: string;
  baseUrl?: string;
  /** Written to stdin, then closed; without it stdin is /dev/null. */
  input?: string | Buffer;
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
};

/** Only PATH and what the test passes: nothing of the test process's own environment leaks in. */
function childEnv(opts: RunOptions): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", ...opts.env };
  if (opts.key !== undefined) env.SVC_API_KEY = opts.key;
  if (opts.baseUrl !== undefined) env.SVC_BASE_URL = opts.baseUrl;
  return env;
}

/** Runs `svc args…` with pipes for stdin, stdout and stderr (not a terminal). */
export function svc(args: string[], opts: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC, ...args], { env: childEnv(opts), cwd: opts.cwd, stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 25_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `svc args…` on a pseudo-terminal (util-linux `script`): stdin, stdout and
 * stderr are a TTY, as at a person's terminal. Returns what the terminal showed
 * (stdout and stderr together, with their control sequences).
 */
export function svcInTty(args: string[], opts: RunOptions & { columns?: number } = {}): Promise<Run> {
  const command = `stty cols ${opts.columns ?? 120} rows 40; exec ${[process.execPath, SVC, ...args].map(shellQuote).join(" ")}`;
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env: { ...childEnv(opts), TERM: "xterm-256color" }, cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Parses `--json` output; fails the test with the whole run shown if it is not JSON. */
export function parsed<T = Record<string, unknown>>(run: Run): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

/**
 * The key must not appear in any output, not even in part: every 8-character
 * window of its random part is looked for, so a truncated or partly masked key fails too.
 */
export function expectNoKey(key: string, ...texts: string[]): void {
  const secret = key.replace(/^svc_(test|live|agent)_/, "");
  const all = texts.join("\n");
  for (let i = 0; i + 8 <= secret.length; i += 1) {
    const window = secret.slice(i, i + 8);
    if (all.includes(window)) throw new Error(`output contains part of the API key (${window}):\n${all.slice(Math.max(0, all.indexOf(window) - 200), all.indexOf(window) + 200)}`);
  }
}

/** Control sequences of a terminal (colours, cursor moves) and carriage returns. */
export const CONTROL = /\x1b\[|\r/;
