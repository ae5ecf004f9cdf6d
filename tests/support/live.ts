import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import type { TestEnv } from "./env";
import { startService, type RunningService } from "./fleet";

export type LiveWorkers = { sim: Simulator; checkWorker: RunningService; ledger: RunningService; stop(): Promise<void> };

/**
 * The live back end of a test environment as real processes: a check-worker
 * pointed at an in-process vendor simulator (a real socket), and a billing-ledger.
 */
export async function startLiveWorkers(env: TestEnv, extra: Record<string, string> = {}): Promise<LiveWorkers> {
  const sim = await startSimulator();
  const [checkWorker, ledger] = await Promise.all([startCheckWorker(env, sim, extra), startService("billing-ledger", env, { SWEEP_INTERVAL_MS: "500", ...extra })]);
  return {
    sim,
    checkWorker,
    ledger,
    async stop() {
      await Promise.all([checkWorker.stop(), ledger.stop()]);
      await sim.close();
    },
  };
}

/** A check-worker alone (no ledger: settlements stay queued), pointed at `sim`. */
export function startCheckWorker(env: TestEnv, sim: Simulator, extra: Record<string, string> = {}): Promise<RunningService> {
  return startService("check-worker", env, { VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "sim-key", SWEEP_INTERVAL_MS: "500", ...extra });
}

/** Polls until `probe` returns a value (for effects of other processes), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A source of distinct US numbers `step` apart (never 20 consecutive, so the
 * enumeration guard stays out of the way; fresh within a file, so never cached).
 */
export function spacedNumbers(step: number): (n: number) => string[] {
  let seq = 0;
  return (n) => Array.from({ length: n }, () => `+1415555${String(1000 + ((seq += step) % 8999)).padStart(4, "0")}`);
}
