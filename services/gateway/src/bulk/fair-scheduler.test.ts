import { FairScheduler, Overloaded } from "./fair-scheduler";

/** A task that runs until released, recording when it started. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
}

function harness(opts: { slots?: number; queuePerTenant?: number; maxWaitMs?: number } = {}) {
  const scheduler = new FairScheduler({ slots: opts.slots ?? 1, queuePerTenant: opts.queuePerTenant ?? 10, maxWaitMs: opts.maxWaitMs ?? 60_000 });
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof gate>>();
  const submit = (tenant: string, name: string, cost = 100, signal?: AbortSignal) => {
    const g = gate();
    gates.set(name, g);
    const result = scheduler.run(
      tenant,
      cost,
      async () => {
        started.push(name);
        await g.done;
        return name;
      },
      signal,
    );
    result.catch(() => undefined);
    return result;
  };
  /** Lets the task finish and waits until the scheduler has moved on. */
  const finish = async (name: string) => {
    gates.get(name)?.release();
    await new Promise((r) => setImmediate(r));
  };
  return { scheduler, started, submit, finish };
}

describe("FairScheduler", () => {
  it("lets a lone tenant use every slot (work-conserving)", () => {
    const h = harness({ slots: 3 });
    for (const n of ["a1", "a2", "a3", "a4"]) void h.submit("a", n);
    expect(h.started).toEqual(["a1", "a2", "a3"]);
    expect(h.scheduler.stats).toEqual({ running: 3, queued: 1, tenants: 1 });
  });

  it("runs another tenant's task before the flooding tenant's queued ones", async () => {
    const h = harness({ slots: 1 });
    for (const n of ["a1", "a2", "a3", "a4"]) void h.submit("flood", n);
    void h.submit("quiet", "b1");
    await h.finish("a1");
    expect(h.started).toEqual(["a1", "b1"]);
    await h.finish("b1");
    await h.finish("a2");
    expect(h.started).toEqual(["a1", "b1", "a2", "a3"]);
  });

  it("shares slots by cost: a tenant with big tasks does not get more turns than one with small ones", async () => {
    const h = harness({ slots: 1 });
    void h.submit("x", "start", 1);
    for (let i = 0; i < 3; i += 1) void h.submit("big", `big${i}`, 1_000);
    for (let i = 0; i < 6; i += 1) void h.submit("small", `small${i}`, 100);
    for (const name of ["start", "big0", "small0", "small1", "small2", "small3", "small4", "small5"]) await h.finish(name);
    // The six small tasks together cost less than one big one: they all run before the second big task.
    expect(h.started.slice(0, 9)).toEqual(["start", "big0", "small0", "small1", "small2", "small3", "small4", "small5", "big1"]);
  });

  it("refuses a tenant whose queue is full, with a Retry-After, and leaves others alone", async () => {
    const h = harness({ slots: 1, queuePerTenant: 2 });
    void h.submit("flood", "a1");
    void h.submit("flood", "a2");
    void h.submit("flood", "a3");
    expect(h.scheduler.hasRoom("flood")).toBe(false);
    const refused = h.submit("flood", "a4");
    await expect(refused).rejects.toBeInstanceOf(Overloaded);
    await expect(refused).rejects.toMatchObject({ retryAfterSeconds: expect.any(Number) });
    expect(((await refused.catch((e) => e)) as Overloaded).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(h.scheduler.hasRoom("quiet")).toBe(true);
    const quiet = h.submit("quiet", "b1");
    await h.finish("a1");
    expect(h.started).toEqual(["a1", "b1"]);
    await h.finish("b1");
    await expect(quiet).resolves.toBe("b1");
  });

  it("refuses a task that waited longer than maxWaitMs", async () => {
    jest.useFakeTimers();
    try {
      const h = harness({ slots: 1, maxWaitMs: 5_000 });
      void h.submit("a", "a1");
      const waiting = h.submit("b", "b1");
      jest.advanceTimersByTime(5_001);
      await expect(waiting).rejects.toBeInstanceOf(Overloaded);
      expect(h.scheduler.stats).toEqual({ running: 1, queued: 0, tenants: 1 });
    } finally {
      jest.useRealTimers();
    }
  });

  it("withdraws a waiting task whose client went away, and never runs it", async () => {
    const h = harness({ slots: 1 });
    void h.submit("a", "a1");
    const controller = new AbortController();
    const gone = h.submit("b", "b1", 100, controller.signal);
    controller.abort(new Error("client gone"));
    await expect(gone).rejects.toThrow("client gone");
    await h.finish("a1");
    expect(h.started).toEqual(["a1"]);
    expect(h.scheduler.stats).toEqual({ running: 0, queued: 0, tenants: 0 });
  });

  it("keeps no state for idle tenants", async () => {
    const h = harness({ slots: 2 });
    const runs = ["a", "b", "c"].map((t) => h.submit(t, `${t}1`));
    for (const t of ["a", "b", "c"]) await h.finish(`${t}1`);
    await Promise.all(runs);
    expect(h.scheduler.stats).toEqual({ running: 0, queued: 0, tenants: 0 });
  });
});
