import { execFileSync } from "node:child_process";
import { readlinkSync } from "node:fs";
import type { MessagePort } from "node:worker_threads";
import { Piscina } from "piscina";
import { runIntake, type Intake, type IntakeInput, type RowMessage, type RowSink } from "./intake-task";

/** A task: a request's intake; `port` (createJob) receives the rows as they are rendered (RowMessage). */
export type IntakeTaskInput = IntakeInput & { port?: MessagePort };

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

/** Sends the rows over the task's port, their buffers transferred. */
function portSink(port: MessagePort, onHead: () => void): RowSink {
  const post = (message: RowMessage, transfer: ArrayBuffer[]) => port.postMessage(message, transfer);
  return {
    head: (intake, rowCount) => {
      onHead();
      post({ type: "head", intake, rowCount }, transferablesOf(intake));
    },
    rows: (text) => post({ type: "rows", text }, [text.buffer as ArrayBuffer]),
    end: (usage) => post({ type: "end", usage }, []),
  };
}

function transferablesOf(result: Intake): ArrayBuffer[] {
  if (!result.ok) return [];
  const text = result.rows && "text" in result.rows ? result.rows.text : undefined;
  return [text, result.cacheKeys?.number, result.cacheKeys?.email].filter((b): b is Uint8Array => b !== undefined && b.byteLength > 0).map((b) => b.buffer as ArrayBuffer);
}

/**
 * With a port, an accepted createJob's intake and rows travel over it and the task
 * returns null once the last row is sent; anything else returns as without one.
 */
export default function intake(input: IntakeTaskInput | { probe: true }): unknown {
  if ("probe" in input) return priority;
  const { port, ...task } = input;
  let streamed = false;
  const result = runIntake(task, cacheSecret, port ? portSink(port, () => (streamed = true)) : undefined);
  if (streamed) return null;
  const buffers = transferablesOf(result);
  if (buffers.length === 0) return result;
  return Piscina.move({ [Piscina.transferableSymbol]: buffers, [Piscina.valueSymbol]: result } as unknown as Parameters<typeof Piscina.move>[0]);
}

export type { Intake };
