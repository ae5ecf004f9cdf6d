import type pg from "pg";
import { newId, type KeyMode, type Scope } from "@svc/domain";

/** What the gateway needs to authorise a request, fetched in one indexed query. */
export type KeyRecord = {
  id: string;
  account_id: string;
  mode: KeyMode;
  is_sandbox: boolean;
  key_hash: Buffer;
  scopes: Scope[];
  allow_ips: string[];
  daily_spend_cap_micros: bigint | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  realtime_enabled: boolean;
  retention_days: number;
  /** The account requires live and agent keys to carry an allowlist. */
  require_ip_allowlist: boolean;
};

export async function findKeyByHash(sql: Pick<pg.Pool, "query">, keyHash: Buffer): Promise<KeyRecord | null> {
  const { rows } = await sql.query<KeyRecord>(
    `SELECT k.id, k.account_id, k.mode, k.is_sandbox, k.key_hash, k.scopes, k.allow_ips, k.daily_spend_cap_micros,
            k.expires_at, k.revoked_at, a.realtime_enabled, a.retention_days, a.require_ip_allowlist
     FROM api_keys k JOIN accounts a ON a.id = k.account_id
     WHERE k.key_hash = $1`,
    [keyHash],
  );
  return rows[0] ?? null;
}

/** Bytes of a key hash kept per key in the gateways' set of live keys. */
export const LIVE_KEY_PREFIX_BYTES = 8;

/** A key counts as live (worth a lookup) unless revoked or already expired. */
const LIVE = `revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`;

/**
 * One page of live keys in key-hash order, as the first LIVE_KEY_PREFIX_BYTES of
 * each hash concatenated into one buffer (already sorted: bytea order is byte
 * order). `last` is the full hash to continue after; `count` < `limit` means the end.
 * One row per page keeps loading millions of keys cheap for the gateway.
 */
export async function liveKeyPrefixPage(sql: Pick<pg.Pool, "query">, after: Buffer, limit: number): Promise<{ prefixes: Buffer; last: Buffer | null; count: number }> {
  const { rows } = await sql.query<{ prefixes: Buffer | null; last: Buffer | null; count: number }>(
    `WITH page AS (SELECT key_hash FROM api_keys WHERE key_hash > $1 AND ${LIVE} ORDER BY key_hash LIMIT $2)
     SELECT (SELECT string_agg(substring(key_hash FROM 1 FOR ${LIVE_KEY_PREFIX_BYTES}), ''::bytea ORDER BY key_hash) FROM page) AS prefixes,
            (SELECT key_hash FROM page ORDER BY key_hash DESC LIMIT 1) AS last,
            (SELECT count(*)::int FROM page) AS count`,
    [after, limit],
  );
  const row = rows[0];
  return { prefixes: row?.prefixes ?? Buffer.alloc(0), last: row?.last ?? null, count: row?.count ?? 0 };
}

/** Whether a key with this hash exists and is live now. */
export async function keyHashIsLive(sql: Pick<pg.Pool, "query">, keyHash: Buffer): Promise<boolean> {
  const { rows } = await sql.query<{ live: boolean }>(`SELECT (${LIVE}) AS live FROM api_keys WHERE key_hash = $1`, [keyHash]);
  return rows[0]?.live ?? false;
}

export type NewApiKey = {
  id?: string;
  accountId: string;
  mode: KeyMode;
  isSandbox?: boolean;
  keyHash: Buffer;
  hint: string;
  scopes: Scope[];
  allowIps: string[];
  dailySpendCapMicros: bigint | null;
  expiresAt: Date | null;
};

export async function insertApiKey(sql: Pick<pg.Pool, "query">, key: NewApiKey): Promise<{ id: string; created_at: Date }> {
  const id = key.id ?? newId("apiKey");
  const { rows } = await sql.query<{ id: string; created_at: Date }>(
    `INSERT INTO api_keys (id, account_id, mode, is_sandbox, key_hash, hint, scopes, allow_ips, daily_spend_cap_micros, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (key_hash) DO UPDATE SET key_hash = EXCLUDED.key_hash
     RETURNING id, created_at`,
    [id, key.accountId, key.mode, key.isSandbox ?? false, key.keyHash, key.hint, key.scopes, key.allowIps, key.dailySpendCapMicros?.toString() ?? null, key.expiresAt],
  );
  return rows[0] as { id: string; created_at: Date };
}

/** Revokes a key; returns false when no such key exists. Revoking twice keeps the first time. */
export async function revokeApiKey(sql: Pick<pg.Pool, "query">, id: string): Promise<{ id: string; revoked_at: Date } | null> {
  const { rows } = await sql.query<{ id: string; revoked_at: Date }>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING id, revoked_at`,
    [id],
  );
  return rows[0] ?? null;
}

export const SANDBOX_ACCOUNT_ID = "acct_publicSandbox000000";
export const SANDBOX_KEY_ID = "key_publicSandbox000000";

/**
 * Makes sure the public sandbox account and key exist with the current server
 * secret's hash. Idempotent; safe for every replica to run at start-up.
 */
export async function ensureSandboxKey(pool: pg.Pool, keyHash: Buffer, hint: string, scopes: Scope[]): Promise<void> {
  await pool.query(
    `INSERT INTO accounts (id, name, is_sandbox, retention_days) VALUES ($1, 'Public sandbox', true, 1) ON CONFLICT (id) DO NOTHING`,
    [SANDBOX_ACCOUNT_ID],
  );
  await pool.query(
    `INSERT INTO api_keys (id, account_id, mode, is_sandbox, key_hash, hint, scopes, allow_ips)
     VALUES ($1, $2, 'test', true, $3, $4, $5, '{}')
     ON CONFLICT (id) DO UPDATE SET key_hash = EXCLUDED.key_hash, scopes = EXCLUDED.scopes, revoked_at = NULL`,
    [SANDBOX_KEY_ID, SANDBOX_ACCOUNT_ID, keyHash, hint, scopes],
  );
}
