import type { ChildProcess } from "node:child_process";
import { startService as startBuilt, type ServiceName } from "@svc/fleet-harness";
import { serviceEnv, type TestEnv } from "./env";

export type { ServiceName };

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
 * Starts a built service (`node services/<name>/dist/main.js`, @svc/fleet-harness) as a
 * real process in `env`, and resolves once its log says it is ready. It never keeps
 * jest's worker alive, and is killed when the worker exits.
 */
export async function startService(name: ServiceName, env: TestEnv, extra: Record<string, string> = {}, readyPattern?: RegExp): Promise<RunningService> {
  const service = await startBuilt(name, {
    env: { PATH: process.env.PATH ?? "", ...serviceEnv(env, { LOG_LEVEL: "info", ...extra }, name) },
    background: true,
    ...(readyPattern ? { ready: readyPattern } : {}),
  });
  return {
    name,
    url: service.url,
    child: service.child,
    output: service.output,
    exited: service.exited,
    async stop(signal = "SIGTERM") {
      const code = await service.stop({ signal });
      assertNoPrivilegeRefused(name, service.output());
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
