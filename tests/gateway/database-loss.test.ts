import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * Postgres cutting every connection (a failover, pg_terminate_backend) fails the
 * work in flight, retryably, and the gateway goes on: a connection cut while checked
 * out must not end the process (pg emits `error` on it with only our listener).
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

it("survives every database connection being cut, in use or idle, and answers again", async () => {
  const { pool } = gw.deps.store;
  const inUse = pool.query("SELECT pg_sleep(10)");
  // Checked out inside a transaction, between two statements: pg reports its loss as an `error` event.
  const inTransaction = await pool.connect();
  await inTransaction.query("BEGIN");
  const idle = await pool.connect();
  idle.release();
  const admin = await pool.connect();
  try {
    await new Promise((r) => setTimeout(r, 200));
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'gateway-test' AND pid <> pg_backend_pid()`,
    );
    expect(rows[0]?.n).toBeGreaterThanOrEqual(1);
  } finally {
    admin.release(true);
  }
  await expect(inUse).rejects.toThrow(/terminat/);
  await expect(inTransaction.query("SELECT 1")).rejects.toThrow();
  inTransaction.release(true);
  const health = await gw.http().get("/v1/health");
  expect(health.status).toBe(200);
});
