import { createLogger } from "./logger";
import { ShutdownManager } from "./shutdown";

function setup(timeoutMs = 1000) {
  const lines: string[] = [];
  const logger = createLogger("shutdown-test", "trace", { write: (line: string) => void lines.push(line) });
  const events: string[] = [];
  const exits: number[] = [];
  const manager = new ShutdownManager(logger, timeoutMs, (code) => {
    exits.push(code);
    events.push(`exit ${code}`);
  });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { manager, events, exits, records };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("ShutdownManager.shutdown", () => {
  it("runs the steps in ascending order, whatever the order they were registered in", async () => {
    const { manager, events } = setup();
    manager.register("database", 50, () => void events.push("database"));
    manager.register("stop accepting", 10, () => void events.push("stop accepting"));
    manager.register("redis", 40, () => void events.push("redis"));
    manager.register("drain", 20, () => void events.push("drain"));
    manager.register("queues", 30, () => void events.push("queues"));
    await manager.shutdown("SIGTERM");
    expect(events).toEqual(["stop accepting", "drain", "queues", "redis", "database", "exit 0"]);
  });

  it("keeps registration order for steps of the same order", async () => {
    const { manager, events } = setup();
    manager.register("b", 1, () => void events.push("b"));
    manager.register("a", 1, () => void events.push("a"));
    manager.register("c", 0, () => void events.push("c"));
    await manager.shutdown("test");
    expect(events).toEqual(["c", "b", "a", "exit 0"]);
  });

  it("waits for each asynchronous step before starting the next", async () => {
    const { manager, events } = setup();
    manager.register("slow", 1, async () => {
      events.push("slow started");
      await sleep(30);
      events.push("slow done");
    });
    manager.register("fast", 2, async () => {
      events.push("fast started");
    });
    await manager.shutdown("test");
    expect(events).toEqual(["slow started", "slow done", "fast started", "exit 0"]);
  });

  it("exits with 0 exactly once when every step succeeds", async () => {
    const { manager, exits, records } = setup(50);
    manager.register("only", 1, () => undefined);
    await manager.shutdown("SIGTERM");
    await sleep(100); // past the deadline: it must have been cancelled
    expect(exits).toEqual([0]);
    expect(records().map((r) => r.msg)).toEqual(["shutting down", "shutdown step done", "shutdown complete"]);
    expect(records()[0]).toMatchObject({ reason: "SIGTERM" });
  });

  it("exits with 0 when nothing is registered", async () => {
    const { manager, exits } = setup();
    await manager.shutdown("test");
    expect(exits).toEqual([0]);
  });

  it("runs the remaining steps after one fails, then exits with 1", async () => {
    const { manager, events, exits, records } = setup();
    manager.register("throws", 1, () => {
      throw new Error("redis went away");
    });
    manager.register("rejects", 2, async () => {
      events.push("rejects");
      throw new Error("queue close failed");
    });
    manager.register("database", 3, () => void events.push("database"));
    await manager.shutdown("test");
    expect(events).toEqual(["rejects", "database", "exit 1"]);
    expect(exits).toEqual([1]);
    const failures = records().filter((r) => r.msg === "shutdown step failed");
    expect(failures.map((r) => r.step)).toEqual(["throws", "rejects"]);
    expect((failures[0]?.err as Record<string, unknown>).message).toBe("redis went away");
  });

  it("runs only once however often it is asked", async () => {
    const { manager, events, exits } = setup();
    manager.register("step", 1, () => void events.push("step"));
    expect(manager.isShuttingDown).toBe(false);
    const first = manager.shutdown("SIGTERM");
    expect(manager.isShuttingDown).toBe(true);
    await Promise.all([first, manager.shutdown("SIGINT"), manager.shutdown("again")]);
    await manager.shutdown("later");
    expect(events).toEqual(["step", "exit 0"]);
    expect(exits).toEqual([0]);
  });

  it("forces exit with 1 when the deadline passes during a step", async () => {
    const { manager, events, exits, records } = setup(50);
    let release: () => void = () => undefined;
    manager.register("hangs", 1, () => new Promise<void>((resolve) => (release = resolve)));
    manager.register("after", 2, () => void events.push("after"));
    const started = Date.now();
    const done = manager.shutdown("SIGTERM");
    await sleep(150);
    expect(exits).toEqual([1]);
    expect(events).toEqual(["exit 1"]);
    expect(records().some((r) => r.msg === "shutdown deadline passed, forcing exit" && r.timeoutMs === 50)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    release();
    await done;
  });

  it("does not force an exit before the deadline", async () => {
    const { manager, exits } = setup(200);
    manager.register("slow but in time", 1, () => sleep(50));
    const done = manager.shutdown("test");
    await sleep(20);
    expect(exits).toEqual([]);
    await done;
    expect(exits).toEqual([0]);
  });
});

describe("ShutdownManager.listen", () => {
  const SIGNAL = "SIGUSR2" as NodeJS.Signals;
  let before: Array<(...args: unknown[]) => void>;

  beforeEach(() => {
    before = process.listeners(SIGNAL) as Array<(...args: unknown[]) => void>;
  });

  afterEach(() => {
    for (const l of process.listeners(SIGNAL)) if (!before.includes(l as (...args: unknown[]) => void)) process.removeListener(SIGNAL, l);
  });

  it("shuts down on the signal and exits at once with 1 on a second signal", async () => {
    const { manager, events, exits, records } = setup(5000);
    let release: () => void = () => undefined;
    manager.register("drain", 1, () => {
      events.push("drain");
      return new Promise<void>((resolve) => (release = resolve));
    });
    manager.listen([SIGNAL]);
    process.emit(SIGNAL, SIGNAL);
    await sleep(10);
    expect(manager.isShuttingDown).toBe(true);
    expect(events).toEqual(["drain"]);
    expect(records()[0]).toMatchObject({ msg: "shutting down", reason: SIGNAL });

    process.emit(SIGNAL, SIGNAL);
    expect(exits).toEqual([1]);
    expect(records().some((r) => r.msg === "second signal during shutdown, exiting now")).toBe(true);
    release();
    await sleep(10);
  });
});
