import { startProcess, type RunningProcess, type StartOptions } from "./process";
import { startService, type ProgramName, type RunningService, type ServiceOptions } from "./services";

/** Every fleet of this process, for the exit guard below. */
const fleets = new Set<Fleet>();
let guarded = false;

export type FleetOptions = {
  /** What members still running get when this process exits: one SIGTERM each (default), or SIGKILL to their process groups. */
  onExit?: "SIGTERM" | "SIGKILL";
  /**
   * A member that exits unasked (not by terminate, kill or stop) ends this process with
   * exit code 1, naming it: a bench must not measure a fleet that lost a member (a second
   * check-worker refused at start-up, say, would halve what it measures in silence).
   */
  failFast?: boolean;
};

/**
 * The processes one script started, stopped together. Whatever ends this process, those
 * still running are told to stop (see `onExit`), so a crashed bench leaves nothing
 * running. A fleet can be stopped and started again (a bench's rounds).
 */
export class Fleet {
  private readonly members = new Set<RunningProcess>();
  readonly onExit: "SIGTERM" | "SIGKILL";
  private readonly failFast: boolean;

  constructor(options: FleetOptions = {}) {
    this.onExit = options.onExit ?? "SIGTERM";
    this.failFast = options.failFast ?? false;
    fleets.add(this);
    if (!guarded) {
      guarded = true;
      process.on("exit", () => {
        for (const fleet of fleets) (fleet.onExit === "SIGTERM" ? fleet.terminate() : fleet.kill("SIGKILL"));
      });
    }
  }

  /** Starts a program (see `startProcess`) as a member: one from the moment it is spawned. */
  start(options: StartOptions): Promise<RunningProcess> {
    return startProcess({ ...options, onSpawn: (p) => this.add(p, options.onSpawn) });
  }

  /** Starts a built service or the simulator (see `startService`) as a member. */
  startService(name: ProgramName, options: ServiceOptions): Promise<RunningService> {
    return startService(name, { ...options, onSpawn: (p) => this.add(p, options.onSpawn) });
  }

  /** The members still running, in the order they were started. */
  get running(): RunningProcess[] {
    return [...this.members];
  }

  /** One SIGTERM to each member (never a second: see RunningProcess.terminate). */
  terminate(): void {
    for (const p of this.members) p.terminate();
  }

  /** `signal` to each member, to its whole process group when it has one. */
  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    for (const p of this.members) p.kill(signal, { group: true });
  }

  /** One SIGTERM each, and waits until all have exited; SIGKILLs what still runs after `graceMs` (default 10 s). */
  async stop({ graceMs = 10_000 } = {}): Promise<void> {
    await Promise.all([...this.members].map((p) => p.stop({ graceMs })));
  }

  private add(p: RunningProcess, onSpawn?: (p: RunningProcess) => void): void {
    this.members.add(p);
    p.child.once("exit", async (code, signal) => {
      this.members.delete(p);
      if (!this.failFast || p.asked()) return;
      // Its last words first: the pipes close after the exit (at most a moment later).
      await Promise.race([p.closed, new Promise((r) => setTimeout(r, 200))]);
      const last = p.output().trimEnd().split("\n").slice(-20).join("\n");
      process.stderr.write(`${p.name} (pid ${p.pid}) exited (${signal ?? code}) unasked: stopping.${last ? `\n${last}` : ""}\n`);
      process.exit(1);
    });
    onSpawn?.(p);
  }
}
