import { DEFAULT_SCOPES, hashApiKey } from "@svc/domain";
import { createStore, type Store } from "@svc/store";
import { createTestEnv, type TestEnv } from "../../../tests/support/env";
import { seedAccount } from "./seed";

/** Accounts and keys written to a real database, as the services will read them. */
let env: TestEnv;
let store: Store;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2 });
});
afterAll(async () => store.close());

type KeyRow = { account_id: string; mode: string; key_hash: Buffer; scopes: string[]; daily_spend_cap_micros: bigint | null };
const keyRows = async (ids: string[]) =>
  (await store.pool.query<KeyRow>(`SELECT account_id, mode, key_hash, scopes, daily_spend_cap_micros FROM api_keys WHERE id = ANY($1) ORDER BY created_at`, [ids])).rows;

it("makes an account with N keys of a mode whose hashes are the services' (KEY_HASH_SECRET)", async () => {
  const seeded = await seedAccount(store.pool, { keyHashSecret: env.keyHashSecret, mode: "live", count: 20, name: "bench", balanceMicros: 5n });
  expect(seeded.keys).toHaveLength(20);
  expect(new Set(seeded.keys).size).toBe(20);
  expect(seeded.keys.every((k) => k.startsWith("svc_live_"))).toBe(true);
  const rows = await keyRows(seeded.keyIds);
  expect(rows).toHaveLength(20);
  expect(rows.every((r) => r.account_id === seeded.accountId && r.mode === "live" && r.daily_spend_cap_micros === null)).toBe(true);
  expect(rows[0]!.scopes).toEqual([...DEFAULT_SCOPES]);
  const hashes = new Set(rows.map((r) => r.key_hash.toString("hex")));
  expect(seeded.keys.every((k) => hashes.has(hashApiKey(env.keyHashSecret, k).toString("hex")))).toBe(true);
  const account = await store.pool.query<{ name: string; balance_micros: bigint }>(`SELECT name, balance_micros FROM accounts WHERE id = $1`, [seeded.accountId]);
  expect(account.rows[0]).toEqual({ name: "bench", balance_micros: 5n });
});

it("opens and closes a pool of its own given a database URL, and writes given keys (the same keys in a second database)", async () => {
  const first = await seedAccount(env.databaseUrl, { keyHashSecret: env.keyHashSecret, count: 2 });
  const second = await createTestEnv();
  const again = await seedAccount(second.databaseUrl, { keyHashSecret: env.keyHashSecret, keys: first.keys });
  expect(again.keys).toEqual(first.keys);
  const other = createStore({ databaseUrl: second.databaseUrl, poolSize: 1 });
  try {
    const { rows } = await other.pool.query<{ account_id: string }>(`SELECT account_id FROM api_keys WHERE id = ANY($1)`, [again.keyIds]);
    expect(rows.map((r) => r.account_id)).toEqual([again.accountId, again.accountId]);
  } finally {
    await other.close();
  }
  const more = await seedAccount(store.pool, { keyHashSecret: env.keyHashSecret, accountId: first.accountId, count: 1 });
  expect(more.accountId).toBe(first.accountId);
});

it("gives agent keys lookup:write and a daily cap unless told otherwise, and an account alone with count 0", async () => {
  const agent = await seedAccount(store.pool, { keyHashSecret: env.keyHashSecret, mode: "agent" });
  const [row] = await keyRows(agent.keyIds);
  expect(row).toMatchObject({ mode: "agent", scopes: ["lookup:write"], daily_spend_cap_micros: 5_000_000n });
  const bare = await seedAccount(store.pool, { keyHashSecret: env.keyHashSecret, count: 0 });
  expect(bare.keys).toEqual([]);
  expect((await store.pool.query(`SELECT 1 FROM api_keys WHERE account_id = $1`, [bare.accountId])).rowCount).toBe(0);
});
