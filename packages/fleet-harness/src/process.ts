import { spawn, type ChildProcess } from "node:child_process";

export type OutputMode = "pipe" | "inherit" | "ignore";

export type StartOptions = {
  /** What the process is called in errors. */
  name: string;
  /** The script node runs (absolute, or relative to `cwd`). */
  script: string;
  args?: readonly string[];
  /** Node's own flags, before the script (`--v8-pool-size=1`, `--cpu-prof`). */
  nodeFlags?: readonly string[];
  cwd?: string;
  /** The child's whole environment: nothing of ours is passed on that is not in it. */
  env: Record<string, string | undefined>;
  /**
   * "pipe" (the default): each line goes to `onLine` and is kept for `output()`;
   * "inherit": written to our own stdout/stderr as it comes; "ignore": dropped.
   */
  stdout?: OutputMode;
  stderr?: OutputMode;
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
  /** How much piped output `output()` keeps: the last `keep` characters (default: all; 0: none). */
  keep?: number;
  /**
   * When the process counts as started: a line of its piped output matches, or a probe
   * resolves true (polled every 100 ms). Without it, started means spawned.
   */
  ready?: RegExp | (() => Promise<boolean>);
  /** How long `ready` may take before the start fails (and the process is killed). Default 20 s. */
  readyTimeoutMs?: number;
  /**
   * A process group of its own: a terminal's Ctrl-C (sent to its foreground group) does
   * not reach it, and `killGroup` reaches what it started (a gateway's cluster processes).
   */
  detached?: boolean;
  /**
   * Never keeps this process alive (neither the child nor its pipes), and is killed with
   * SIGKILL when this process exits: for test runners, whose workers must be able to end.
   */
  background?: boolean;
  /** Called with the process as soon as it is spawned, before it is ready (to stop it whatever happens next). */
  onSpawn?: (proc: RunningProcess) => void;
};

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export type RunningProcess = {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Its piped output so far (stdout and stderr interleaved as they came). */
  output(): string;
  /** Resolves with the exit code when it exits (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resolves with the exit code and the signal when it exits. */
  exit: Promise<Exit>;
  /**
   * Resolves as `exit` does, once its pipes have closed too: all it wrote is in `output()`.
   * (A process it started that holds the pipes delays this; `exit` does not wait for that.)
   */
  closed: Promise<Exit>;
  running(): boolean;
  /** Whether we signalled it (terminate, kill, stop): an exit without that is its own doing. */
  asked(): boolean;
  /** One SIGTERM, never a second (a second signal makes a service cut its shutdown short). */
  terminate(): void;
  /** Sends `signal` to the process (its group too with `group`, when detached), if it still runs. */
  kill(signal?: NodeJS.Signals, options?: { group?: boolean }): void;
  /**
   * Sends `signal` (default SIGTERM, once) and waits for the exit; resolves with the exit
   * code. With `graceMs`, SIGKILLs it (its group, when detached) if it runs longer.
   */
  stop(options?: { signal?: NodeJS.Signals; graceMs?: number }): Promise<number | null>;
};

/** Background children still running: SIGKILLed when this process exits. */
const background = new Set<ChildProcess>();
let guarded = false;
function guardBackground(child: ChildProcess): void {
  background.add(child);
  child.once("exit", () => background.delete(child));
  if (guarded) return;
  guarded = true;
  process.on("exit", () => {
    for (const c of background) c.kill("SIGKILL");
  });
}

/**
 * Starts `node [nodeFlags] script [args]` and resolves once it is ready (see
 * `StartOptions.ready`). Fails when it exits or is not ready in time, with its output so
 * far in the message (and kills it, its process group too when detached).
 */
export async function startProcess(options: StartOptions): Promise<RunningProcess> {
  const stdout = options.stdout ?? "pipe";
  const stderr = options.stderr ?? "pipe";
  const args = [...(options.nodeFlags ?? []), options.script, ...(options.args ?? [])];
  const child = spawn(process.execPath, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", stdout, stderr], detached: options.detached ?? false });
  if (child.pid === undefined) {
    // Not started (a cwd that does not exist, say): spawn reports why on `error`, after this tick.
    const err = await new Promise<Error>((resolve) => child.once("error", resolve));
    throw new Error(`${options.name} could not be started: ${err.message}`);
  }
  const pid = child.pid;
  const exit = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const exited = exit.then((e) => e.code);
  const closed = new Promise<Exit>((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  if (options.background) {
    guardBackground(child);
    child.unref();
  }

  const keep = options.keep ?? Infinity;
  let kept = "";
  const lineWaiters: Array<(line: string) => void> = [];
  for (const [stream, which] of [
    [child.stdout, "stdout"],
    [child.stderr, "stderr"],
  ] as const) {
    if (!stream) continue;
    if (options.background) (stream as unknown as { unref?: () => void }).unref?.();
    stream.setEncoding("utf8"); // a character split between two chunks stays one character
    let partial = "";
    const emit = (line: string) => {
      options.onLine?.(line, which);
      for (const waiter of lineWaiters) waiter(line);
    };
    stream.on("data", (text: string) => {
      if (keep > 0) kept = keep === Infinity ? kept + text : (kept + text).slice(-keep);
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) emit(line);
    });
    stream.on("end", () => {
      if (partial) emit(partial);
      partial = "";
    });
  }

  let terminated = false;
  let asked = false;
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = (signal: NodeJS.Signals = "SIGTERM", { group = false } = {}) => {
    if (!running()) return;
    asked = true;
    if (group && options.detached) {
      try {
        process.kill(-pid, signal);
        return;
      } catch {
        /* the group is gone: the process alone below */
      }
    }
    child.kill(signal);
  };
  const proc: RunningProcess = {
    name: options.name,
    child,
    pid,
    output: () => kept,
    exited,
    exit,
    closed,
    running,
    asked: () => asked,
    terminate() {
      if (terminated) return;
      terminated = true;
      kill("SIGTERM");
    },
    kill,
    async stop({ signal = "SIGTERM", graceMs } = {}) {
      if (signal === "SIGTERM") proc.terminate();
      else kill(signal);
      if (graceMs === undefined) return exited;
      const timer = setTimeout(() => kill("SIGKILL", { group: true }), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  options.onSpawn?.(proc);
  if (options.ready) await waitReady(proc, options.ready, options.readyTimeoutMs ?? 20_000, lineWaiters);
  return proc;
}

async function waitReady(proc: RunningProcess, ready: RegExp | (() => Promise<boolean>), timeoutMs: number, lineWaiters: Array<(line: string) => void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const done = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${proc.name} did not start within ${timeoutMs} ms:\n${proc.output()}`)), timeoutMs);
    // Its last words first: the pipes close after the exit (at most a moment later).
    void proc.exit.then(async ({ code, signal }) => {
      if (settled) return;
      await Promise.race([proc.closed, new Promise((r) => setTimeout(r, 200))]);
      reject(new Error(`${proc.name} exited (${signal ?? code}) during start-up:\n${proc.output()}`));
    });
    if (ready instanceof RegExp) {
      lineWaiters.push((line) => {
        if (ready.test(line)) resolve();
      });
    } else {
      void (async () => {
        while (!settled) {
          if (await ready().catch(() => false)) return resolve();
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
    }
  });
  try {
    await done;
  } catch (err) {
    proc.kill("SIGKILL", { group: true });
    throw err;
  } finally {
    settled = true;
    clearTimeout(timer);
    lineWaiters.length = 0;
  }
}

/** A probe for `ready`: true once GET `url` answers 200. */
export function httpOk(url: string): () => Promise<boolean> {
  return () =>
    fetch(url, { signal: AbortSignal.timeout(2_000) }).then(
      async (res) => {
        await res.arrayBuffer();
        return res.status === 200;
      },
      () => false,
    );
}
