import path from "node:path";
import { SERVICES, type ServiceName } from "@svc/store";
import { startProcess, type RunningProcess, type StartOptions } from "./process";

export { SERVICES, type ServiceName };

/** What a fleet runs: the four services and the stand-in vendor. */
export type ProgramName = ServiceName | "vendor-simulator";

/** The checkout this package belongs to (from src/ and from dist/ alike). */
export const CHECKOUT = path.resolve(__dirname, "..", "..", "..");

/** The built entry point of `name` in the checkout at `root`. */
export function programScript(name: ProgramName, root: string = CHECKOUT): string {
  return name === "vendor-simulator" ? path.join(root, "packages", "vendor-simulator", "dist", "main.js") : path.join(root, "services", name, "dist", "main.js");
}

/**
 * The log line (LOG_LEVEL info or lower) that says a program is ready: the gateway
 * listens, a worker service consumes its queue, the simulator listens. At LOG_LEVEL warn
 * none is written: pass a probe (`httpOk`) or no `ready` at all.
 */
export const READY_LINE: Record<ProgramName, RegExp> = {
  gateway: /gateway listening/,
  "check-worker": /"consuming"/,
  "billing-ledger": /"consuming"/,
  "webhook-dispatcher": /"consuming"/,
  "vendor-simulator": /listening/,
};

/**
 * The node flags the gateway is meant to run with (GATEWAY_NODE_FLAGS in
 * services/gateway/src/main.ts; its launchers pass them). Not added by `startService`:
 * a caller passes them as `nodeFlags` (the runner of `npm run up` does, the test-mode
 * bench does; tests and the other benches have always run without).
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = ["--v8-pool-size=1"];

export type ServiceOptions = Omit<StartOptions, "name" | "script" | "ready"> & {
  /** The checkout whose build runs (default this one); also the working directory unless `cwd` says otherwise. */
  root?: string;
  /** Default READY_LINE[name]; `null`: started means spawned (a service at LOG_LEVEL warn writes no ready line). */
  ready?: StartOptions["ready"] | null;
};

export type RunningService = RunningProcess & {
  /** Where the gateway listens, from its log (`"port":N`); "" for other programs or when not logged. */
  url: string;
};

/** Starts the built `name` as a real process (see `startProcess`); ready as its log says unless `ready` says otherwise. */
export async function startService(name: ProgramName, options: ServiceOptions): Promise<RunningService> {
  const { root = CHECKOUT, ready, ...rest } = options;
  const proc = await startProcess({
    cwd: root,
    ...rest,
    name,
    script: programScript(name, root),
    ready: ready === null ? undefined : (ready ?? READY_LINE[name]),
  });
  const port = name === "gateway" ? /"port":(\d+)/.exec(proc.output())?.[1] : undefined;
  return Object.assign(proc, { url: port ? `http://127.0.0.1:${port}` : "" });
}
