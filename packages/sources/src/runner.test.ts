import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { CheckRunner } from "./runner";
import { SourceError, type Identifier, type Source } from "./types";
import { VendorHttpSource } from "./vendor-http";

const id = (n: number): Identifier => ({ e164: `+1646555${String(1000 + n).padStart(4, "0")}`, email: null, domain: null, country: "US", numberType: undefined });

describe("CheckRunner against vendor routes on real sockets", () => {
  let primary: Simulator;
  let backup: Simulator;
  beforeEach(async () => {
    [primary, backup] = await Promise.all([startSimulator(), startSimulator()]);
  });
  afterEach(async () => {
    await Promise.all([primary.close(), backup.close()]);
  });
  const runner = () =>
    new CheckRunner(null, "t")
      .add(new VendorHttpSource("primary", "whatsapp", primary.url, "sim-key"), { timeoutMs: 300, concurrency: 4, retries: 0 })
      .add(new VendorHttpSource("backup", "whatsapp", backup.url, "sim-key"), { timeoutMs: 300, concurrency: 4, retries: 0 });

  it("answers a batch with one call per route, in order", async () => {
    const ids = Array.from({ length: 150 }, (_, i) => id(i));
    const answers = await runner().runMany("whatsapp", ids);
    expect(answers).toHaveLength(150);
    expect(answers.every((a) => a.status === "ok" || a.status === "unknown")).toBe(true);
    expect(primary.stats.requests).toBe(2); // 100 + 50
    expect(backup.stats.requests).toBe(0);
    // Same answers one at a time: batching changes nothing about the result.
    const single = await runner().run("whatsapp", ids[7] as Identifier);
    expect(single).toEqual(answers[7]);
  });

  it("fails over to the next route and, when none answers, gives unknown for every identifier", async () => {
    primary.settings.outage = true;
    const r = runner();
    const failedOver = await r.runMany("whatsapp", [id(1), id(2)]);
    expect(failedOver.map((a) => a.status)).not.toContain("pending");
    expect(backup.stats.answered).toBe(2);
    backup.settings.outage = true;
    expect(await r.runMany("whatsapp", [id(3), id(4), id(5)])).toEqual(Array(3).fill({ status: "unknown", registered: null, attributes: null }));
  });

  it("times out a hanging route and skips it once its breaker is open", async () => {
    primary.settings.hang = true;
    const r = runner();
    for (let i = 0; i < 5; i += 1) await r.runMany("whatsapp", [id(i)]);
    const calls = primary.stats.requests;
    expect(calls).toBe(5);
    const started = Date.now();
    await r.runMany("whatsapp", [id(9)]);
    expect(primary.stats.requests).toBe(calls);
    expect(Date.now() - started).toBeLessThan(250); // no timeout waited: straight to the backup
  });

  it("retries a retryable failure with backoff before failing over", async () => {
    let calls = 0;
    const flaky: Source = {
      route: "flaky",
      check: "carrier",
      async lookup() {
        calls += 1;
        if (calls < 3) throw new SourceError("unavailable", true);
        return { status: "ok", registered: null, attributes: { line_type: "mobile" } };
      },
    };
    const r = new CheckRunner(null, "t").add(flaky, { timeoutMs: 500, concurrency: 1, retries: 2 });
    expect((await r.run("carrier", id(1))).status).toBe("ok");
    expect(calls).toBe(3);
  });
});
