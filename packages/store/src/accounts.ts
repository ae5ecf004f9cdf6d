import type pg from "pg";
import { newId } from "@svc/domain";
import { withTransaction, type Sql } from "./db";
import { postLedgerTransaction } from "./ledger";

export type NewAccount = { name: string; balanceMicros: bigint; retentionDays?: number; isSandbox?: boolean; id?: string };

/** Creates an account; an opening balance is posted to the ledger as a top-up. */
export async function createAccount(pool: pg.Pool, input: NewAccount): Promise<{ id: string }> {
  return withTransaction(pool, (client) => insertAccount(client, input));
}

/** createAccount inside the caller's transaction. */
export async function insertAccount(client: pg.PoolClient, input: NewAccount): Promise<{ id: string }> {
  const id = input.id ?? newId("account");
  await client.query(`INSERT INTO accounts (id, name, retention_days, is_sandbox) VALUES ($1, $2, $3, $4)`, [
    id,
    input.name,
    input.retentionDays ?? 30,
    input.isSandbox ?? false,
  ]);
  if (input.balanceMicros > 0n) {
    await postLedgerTransaction(client, {
      accountId: id,
      kind: "topup",
      reference: `opening:${id}`,
      reason: "opening balance",
      lines: [
        { book: "balance", amountMicros: input.balanceMicros },
        { book: "funding", amountMicros: -input.balanceMicros },
      ],
    });
  }
  return { id };
}

export type AccountRow = {
  id: string;
  name: string;
  balance_micros: bigint;
  reserved_micros: bigint;
  retention_days: number;
  realtime_enabled: boolean;
  is_sandbox: boolean;
};

export async function getAccount(sql: Pick<pg.Pool, "query">, id: string): Promise<AccountRow | null> {
  const { rows } = await sql.query<AccountRow>(
    `SELECT id, name, balance_micros, reserved_micros, retention_days, realtime_enabled, is_sandbox FROM accounts WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

/** An account as its key's holder sees it on `day` (UTC): today's live counters, zero when they belong to an earlier day. */
export type AccountToday = {
  id: string;
  name: string;
  balance_micros: bigint;
  reserved_micros: bigint;
  low_balance_threshold_micros: bigint | null;
  retention_days: number;
  daily_identifiers_cap: number | null;
  daily_spend_cap_micros: bigint | null;
  day_identifiers: number;
  day_spend_micros: bigint;
  /** The key's own daily spend cap and today's spend against it. */
  key_cap: bigint | null;
  key_day_spend: bigint;
};

/** The account of API key `keyId` with its and the key's counters for `day` (`YYYY-MM-DD`); null when there is no such key. */
export async function accountTodayOfKey(sql: Sql, keyId: string, day: string): Promise<AccountToday | null> {
  const { rows } = await sql.query<AccountToday>(
    `SELECT a.id, a.name, a.balance_micros, a.reserved_micros, a.low_balance_threshold_micros, a.retention_days,
            a.daily_identifiers_cap, a.daily_spend_cap_micros,
            CASE WHEN a.counter_day = $2::date THEN a.day_identifiers ELSE 0 END AS day_identifiers,
            CASE WHEN a.counter_day = $2::date THEN a.day_spend_micros ELSE 0 END AS day_spend_micros,
            k.daily_spend_cap_micros AS key_cap,
            CASE WHEN k.counter_day = $2::date THEN k.day_spend_micros ELSE 0 END AS key_day_spend
     FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.id = $1`,
    [keyId, day],
  );
  return rows[0] ?? null;
}
