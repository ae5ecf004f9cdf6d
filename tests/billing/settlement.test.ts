import { reconcileAccount, settleReservation, withTransaction } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startService } from "../support/fleet";
import { deleteKeysUnder } from "../support/redis-keys";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { startSimulator } from "@svc/vendor-simulator";
import { eventually, startCheckWorker, startLiveWorkers } from "../support/live";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

const numbers = (start: number, n: number) => Array.from({ length: n }, (_, i) => `+1312555${String(start + i * 7).padStart(4, "0")}`);

async function pendingLiveLookup(k: TestKey, n = 4): Promise<{ lookupId: string; reservationId: string }> {
  const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers: numbers(1000 + Math.floor(Math.random() * 8000), n), checks: ["spam", "carrier"], wait: 0 });
  expect(res.status).toBe(202);
  const { rows } = await gw.store.pool.query<{ id: string }>(`SELECT id FROM reservations WHERE lookup_id = $1`, [res.body.id]);
  return { lookupId: res.body.id, reservationId: rows[0]?.id as string };
}

/** Runs the lookup's checks with a real check-worker while no ledger runs: its settlement stays queued. */
async function answerWithoutLedger(lookupId: string): Promise<void> {
  const sim = await startSimulator();
  const worker = await startCheckWorker(gw.env, sim, { SWEEP_INTERVAL_MS: "600000" });
  try {
    await eventually(async () => (await gw.store.pool.query(`SELECT 1 FROM lookups WHERE id = $1 AND status = 'completed'`, [lookupId])).rowCount, 10_000, "lookup completed");
  } finally {
    await worker.stop();
    await sim.close();
  }
}

async function chargesOf(accountId: string): Promise<number> {
  const { rows } = await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transactions WHERE account_id = $1 AND kind = 'charge'`, [accountId]);
  return rows[0]?.n ?? 0;
}

describe("settlement is exactly once", () => {
  it("settles a reservation delivered twice, or twice at the same time, only once", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const { lookupId, reservationId } = await pendingLiveLookup(k);
    // Answer the lookup with the real check-worker (no ledger running), then settle by hand, concurrently and again.
    await answerWithoutLedger(lookupId);
    const now = new Date();
    const results = await Promise.all([1, 2, 3].map(() => withTransaction(gw.store.pool, (c) => settleReservation(c, reservationId, now))));
    expect(results.filter((r) => r.settledPairs > 0)).toHaveLength(1);
    const again = await withTransaction(gw.store.pool, (c) => settleReservation(c, reservationId, now));
    expect(again).toMatchObject({ settledPairs: 0, closed: false });
    expect(await chargesOf(k.accountId)).toBe(1);
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, reservedMicros: 0n, ledgerBalanceMicros: 1_000_000n - 12_000n });
  });

  it("re-runs a settlement whose consumer was killed before committing, charging once", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const { lookupId, reservationId } = await pendingLiveLookup(k);
    await answerWithoutLedger(lookupId);
    // The check-worker queued the settlement. Hold the reservation's row so the ledger blocks inside its transaction…
    const blocker = await gw.store.pool.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM reservations WHERE id = $1 FOR UPDATE`, [reservationId]);
    const ledger = await startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "600000", JOB_LOCK_MS: "1500" });
    await eventually(async () => (await gw.store.pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'billing-ledger' AND wait_event_type = 'Lock'`)).rowCount, 10_000, "ledger blocked");
    // …and kill it there: no commit, no acknowledgement.
    await ledger.stop("SIGKILL");
    await blocker.query("ROLLBACK");
    blocker.release();
    expect(await chargesOf(k.accountId)).toBe(0);
    // A new ledger gets the stalled job once its lock has lapsed, and settles it once.
    const second = await startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "600000", JOB_LOCK_MS: "1500" });
    try {
      await eventually(async () => (await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros === 0n, 20_000, "settled after restart");
    } finally {
      await second.stop();
    }
    expect(await chargesOf(k.accountId)).toBe(1);
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 12_000n });
  });

  it("releases money held for work that was abandoned (the sweeper closes expired reservations)", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const { reservationId } = await pendingLiveLookup(k);
    expect((await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros).toBe(12_000n);
    await gw.store.pool.query(`UPDATE reservations SET expires_at = now() - interval '1 second' WHERE id = $1`, [reservationId]);
    const ledger = await startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "200" });
    try {
      await eventually(async () => (await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros === 0n, 10_000, "released");
    } finally {
      await ledger.stop();
    }
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n });
    expect(await chargesOf(k.accountId)).toBe(0);
  });

  it("loses nothing when Redis is emptied: Postgres drives the lookup to completion and settlement", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 1_000_000n });
    const { lookupId } = await pendingLiveLookup(k);
    await deleteKeysUnder(gw.env.redisUrl, gw.env.redisPrefix);
    const workers = await startLiveWorkers(gw.env);
    try {
      await eventually(async () => (await reconcileAccount(gw.store.pool, k.accountId)).reservedMicros === 0n, 25_000, "completed and settled");
    } finally {
      await workers.stop();
    }
    const read = await gw.http().get(`/v1/lookups/${lookupId}`).set(bearer(k.key));
    expect(read.body.status).toBe("completed");
    expect(await reconcileAccount(gw.store.pool, k.accountId)).toMatchObject({ balanced: true, ledgerBalanceMicros: 1_000_000n - 12_000n });
  });
});
