import { createLogger } from "@svc/process";
import { CheckRunner, VendorHttpSource } from "@svc/sources";
import { createStore, type Store } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { answerRows, cacheFreshAnswers, type PendingRow } from "../../services/check-worker/src/answer-rows";
import { createTestEnv } from "../support/env";

let store: Store;
let sim: Simulator;
beforeAll(async () => {
  const env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
  sim = await startSimulator();
});
afterAll(async () => {
  await sim?.close();
  await store?.close();
});

const pendingRow = (n: number): PendingRow => ({
  row_no: n,
  kind: "number",
  e164: `+1646555${String(2000 + n * 3).padStart(4, "0")}`,
  email: null,
  row_status: "valid",
  checks: [{ service: "whatsapp", status: "pending", registered: null, attributes: null, cached: false, billed: false, checked_at: null }],
});
const cacheRows = async () => (await store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM check_cache`)).rows[0]?.n;

describe("the answer cache is written only after the answers are committed", () => {
  it("a run that dies before its commit leaves nothing cached, so the retry's fresh answers are billed", async () => {
    const runner = new CheckRunner(null, "t").add(new VendorHttpSource("primary", "whatsapp", sim.url, "sim-key"), { timeoutMs: 2_000, concurrency: 2, retries: 0 });
    const deps = { store, runner, cacheSecret: "cache-secret-for-this-test", now: () => new Date() };
    const rows = Array.from({ length: 10 }, (_, i) => pendingRow(i + 1));
    const conclusive = (run: Awaited<ReturnType<typeof answerRows>>) => run.rows.flatMap((r) => r.checks).filter((c) => c.status === "ok");

    // First run: answers, then the process dies before completing the lookup or chunk.
    const dead = await answerRows(deps, rows);
    const answered = conclusive(dead).length;
    expect(answered).toBeGreaterThan(0);
    expect(await cacheRows()).toBe(0);

    // The retry asks the source again: fresh, billed answers, not its own dead run's as `cached`.
    const retry = await answerRows(deps, rows);
    expect(conclusive(retry).map((c) => [c.cached, c.billed])).toEqual(Array(answered).fill([false, true]));

    // Committed: now the answers are kept for the next request.
    await cacheFreshAnswers({ ...deps, logger: createLogger("test", "silent") }, retry.fresh);
    expect(await cacheRows()).toBe(answered);
    const later = await answerRows(deps, rows);
    expect(conclusive(later).map((c) => [c.cached, c.billed])).toEqual(Array(answered).fill([true, false]));
  });
});
