import type pg from "pg";
import { newId } from "@svc/domain";
import { withTransaction } from "./db";
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
