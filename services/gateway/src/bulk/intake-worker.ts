import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import { Piscina } from "piscina";
import { runIntake, type Intake, type IntakeInput } from "./intake-task";

export type IntakeWorkerData = { cacheSecret: string; schedIdle: boolean };

/** How an intake thread ended up scheduled: SCHED_IDLE, or niceness alone. */
export type ThreadPriority = "idle" | "nice";

/**
 * Linux: moves this thread to SCHED_IDLE, where any other runnable thread on the
 * machine preempts it at once. Niceness alone is not enough: with autogroup (the
 * default on desktops and many servers) or cgroups, a niced thread only yields to
 * threads of its own group, not to Postgres or Redis on the same host. util-linux's
 * `chrt` does it (no Node API does); without it the thread keeps its niceness.
 */
function becomeIdlePriority(): ThreadPriority {
  try {
    const tid = readlinkSync("/proc/thread-self").split("/").pop() as string;
    execFileSync("chrt", ["--idle", "--pid", "0", tid], { stdio: "ignore", timeout: 2_000 });
    return "idle";
  } catch {
    return "nice";
  }
}

/**
 * Entry point of an intake thread (piscina loads the built file). Settings come
 * once, as workerData; results travel back with their buffers transferred, not copied.
 */
const { cacheSecret, schedIdle } = Piscina.workerData as IntakeWorkerData;
const priority: ThreadPriority = schedIdle ? becomeIdlePriority() : "nice";

export default function intake(input: IntakeInput | { probe: true }): unknown {
  if ("probe" in input) return priority;
  const result = runIntake(input, cacheSecret);
  if (!result.ok) return result;
  const buffers = [result.rows?.text, result.cacheKeys?.number, result.cacheKeys?.email].filter((b): b is Uint8Array => b !== undefined && b.byteLength > 0);
  if (buffers.length === 0) return result;
  return Piscina.move({ [Piscina.transferableSymbol]: buffers.map((b) => b.buffer), [Piscina.valueSymbol]: result } as unknown as Parameters<typeof Piscina.move>[0]);
}

export type { Intake };
