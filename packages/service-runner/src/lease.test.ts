import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { failureBackoffMs, HeldLease, LeaseLostError } from "./lease";

/**
 * The lease keeper's timing on real timers, with the row's side played by a
 * function (the SQL behind it is tested against Postgres in tests/live/leases.test.ts).
 */
const settings = { leaseMs: 600, renewEveryMs: 100 };

function keeper(renew: (r: { held: Date; now: Date; until: Date }) => Promise<boolean>, onRenewed?: () => void) {
  const claimedAt = performance.now();
  const now = new Date();
  return new HeldLease({ settings, now: () => new Date(), claimedAt, leasedUntil: new Date(now.getTime() + settings.leaseMs), renew, ...(onRenewed ? { onRenewed } : {}) });
}

describe("HeldLease", () => {
  it("keeps renewing while the attempt runs, each renewal from the lease the last one wrote", async () => {
    const written: Array<{ held: Date; until: Date }> = [];
    let renewed = 0;
    let enough: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (enough = resolve));
    const lease = keeper(
      async (r) => {
        written.push(r);
        return true;
      },
      () => {
        renewed += 1;
        if (renewed === 10) enough(); // 10 renewals ≈ 1 s: well past the 600 ms a claim alone holds
      },
    );
    try {
      await reached;
      expect(lease.held).toBe(true);
      expect(lease.signal.aborted).toBe(false);
      for (let i = 1; i < written.length; i += 1) expect(written[i]?.held).toEqual(written[i - 1]?.until);
    } finally {
      lease.stop();
    }
  });

  it("stops the attempt at once when a renewal finds the row no longer its own", async () => {
    const lease = keeper(async () => false);
    const work = new Promise<string>(() => undefined); // work that would never end by itself
    const started = performance.now();
    await expect(lease.guard(work)).rejects.toBeInstanceOf(LeaseLostError);
    expect(performance.now() - started).toBeLessThan(settings.leaseMs - settings.renewEveryMs);
    expect(lease.held).toBe(false);
    expect(() => lease.assertHeld()).toThrow(LeaseLostError);
  });

  it("gives itself up before its lease runs out when no renewal gets through", async () => {
    const claimedAt = performance.now();
    const lease = new HeldLease({
      settings,
      now: () => new Date(),
      claimedAt,
      leasedUntil: new Date(Date.now() + settings.leaseMs),
      renew: () => new Promise<boolean>(() => undefined), // the database never answers
    });
    await once(lease.signal, "abort");
    const at = performance.now() - claimedAt;
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(at).toBeGreaterThanOrEqual(settings.leaseMs - settings.renewEveryMs - 5);
    expect(at).toBeLessThan(settings.leaseMs); // before any other worker may claim the row
  });

  it("treats a failing renewal as not renewed: the deadline stands", async () => {
    const claimedAt = performance.now();
    const lease = new HeldLease({
      settings,
      now: () => new Date(),
      claimedAt,
      leasedUntil: new Date(Date.now() + settings.leaseMs),
      renew: async () => {
        throw new Error("connection terminated");
      },
      onRenewError: () => undefined,
    });
    await once(lease.signal, "abort");
    expect(performance.now() - claimedAt).toBeLessThan(settings.leaseMs);
  });

  it("returns the work's result while held, and stops renewing once stopped", async () => {
    let calls = 0;
    const lease = keeper(async () => {
      calls += 1;
      return true;
    });
    expect(await lease.guard(Promise.resolve(42))).toBe(42);
    lease.stop();
    const after = calls;
    expect(lease.held).toBe(false);
    // A stopped lease has no timers left: nothing renews and nothing aborts it later.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(after);
    expect(lease.signal.aborted).toBe(false);
  });

  it("refuses settings that leave no time to renew", () => {
    expect(() => new HeldLease({ settings: { leaseMs: 100, renewEveryMs: 60 }, now: () => new Date(), claimedAt: 0, leasedUntil: new Date(), renew: async () => true })).toThrow();
  });
});

describe("failureBackoffMs", () => {
  it("takes a row over 1 s after a first failure, doubling to 5 minutes", () => {
    expect([1, 2, 3, 4].map((n) => failureBackoffMs(n))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(failureBackoffMs(30)).toBe(300_000);
  });
});
