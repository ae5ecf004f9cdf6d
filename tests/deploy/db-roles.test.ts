import { spawnSync } from "node:child_process";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createStore, ensureMonthPartitions, scramVerifier, type ServiceName, type Store } from "@svc/store";
import { createTestEnv, serviceDatabaseUrl, type TestEnv } from "../support/env";
import { accountWithKey } from "../support/fixtures";
import { databaseUrl, withAdmin } from "../support/pg-admin";

/**
 * Each service's Postgres role, as scripts/db-deploy.mjs leaves it (the run's template
 * database got the same, tests/support/global-setup.ts): connected as each role, what
 * it may do works and what it may not is refused by Postgres itself — above all, the
 * internet-facing gateway cannot write the ledger or change a balance.
 */
const ROOT = path.resolve(__dirname, "..", "..");
let env: TestEnv;
let store: Store;
let accountId: string;
const clients: pg.Client[] = [];

beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl });
  ({ accountId } = await accountWithKey(store, env.keyHashSecret));
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await store?.close();
});

async function as(service: ServiceName): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: serviceDatabaseUrl(env.databaseUrl, service) });
  await client.connect();
  clients.push(client);
  return client;
}

/** Runs `sql` in a transaction that is rolled back: only whether Postgres allows it matters. */
async function attempt(client: pg.Client, sql: string, params: unknown[] = []): Promise<"allowed" | string> {
  await client.query("BEGIN");
  try {
    await client.query(sql, params);
    return "allowed";
  } catch (err) {
    return (err as { code?: string }).code === "42501" ? "refused" : `error ${(err as Error).message}`;
  } finally {
    await client.query("ROLLBACK");
  }
}

const LEDGER_AND_MONEY = [
  [`INSERT INTO ledger_transactions (id, account_id, kind, reference, reason) VALUES ('ltx_x', $1, 'topup', 'forged', 'x')`, "post a ledger transaction"],
  [`INSERT INTO ledger_entries (transaction_id, account_id, book, amount_micros) VALUES ('ltx_x', $1, 'balance', 1000000)`, "write a ledger entry"],
  [`INSERT INTO settlements (reservation_id, row_no, check_code, outcome, amount_micros) SELECT 'rsv_x', 1, 'x', 'charged', 0 WHERE $1::text IS NOT NULL`, "record a settlement"],
  [`UPDATE accounts SET balance_micros = balance_micros + 1000000 WHERE id = $1`, "change a balance"],
  [`UPDATE reservations SET status = 'closed', charged_micros = 0 WHERE account_id = $1`, "close a reservation"],
] as const;

describe("the gateway's role (internet-facing)", () => {
  it.each(LEDGER_AND_MONEY)("may not %s", async (sql, _what) => {
    expect(await attempt(await as("gateway"), sql, [accountId])).toBe("refused");
  });

  it.each([
    ["DELETE FROM accounts WHERE id = $1", [true]],
    ["TRUNCATE lookups", []],
    ["DROP TABLE ledger_entries", []],
    ["CREATE TABLE stolen (x int)", []],
    ["ALTER TABLE accounts ADD COLUMN x int", []],
    ["SELECT svc_create_month_partitions('2040-01-01')", []],
    ["INSERT INTO accounts (id, name, balance_micros) VALUES ('acct_forged', 'x', 1000000000)", []],
    ["SELECT * FROM delivery_attempts", []],
  ] as const)("may not %s", async (sql, params) => {
    expect(await attempt(await as("gateway"), sql, params.length ? [accountId] : [])).toBe("refused");
  });

  it("may do its own work: read keys, reserve, store lookups, sign up test accounts", async () => {
    const gw = await as("gateway");
    expect(await attempt(gw, "SELECT key_hash FROM api_keys LIMIT 1")).toBe("allowed");
    expect(await attempt(gw, "UPDATE accounts SET reserved_micros = reserved_micros + 1 WHERE id = $1", [accountId])).toBe("allowed");
    expect(await attempt(gw, "INSERT INTO accounts (id, name, retention_days, is_sandbox) VALUES ('acct_signup000001', 'x', 30, false)")).toBe("allowed");
    expect(await attempt(gw, "SELECT count(*) FROM lookups")).toBe("allowed");
  });
});

describe("the billing-ledger's role", () => {
  it("may post to the ledger and settle, but not mint keys, change scopes, read idempotency records or delete", async () => {
    const ledger = await as("billing-ledger");
    expect(await attempt(ledger, "UPDATE accounts SET balance_micros = balance_micros - 1 WHERE id = $1", [accountId])).toBe("allowed");
    expect(await attempt(ledger, "INSERT INTO api_keys (id, account_id, mode, key_hash, hint, scopes) VALUES ('key_x', $1, 'live', '\\x00', 'x', '{}')", [accountId])).toBe("refused");
    expect(await attempt(ledger, "UPDATE api_keys SET scopes = '{}' WHERE account_id = $1", [accountId])).toBe("refused");
    expect(await attempt(ledger, "SELECT * FROM idempotency_records")).toBe("refused");
    expect(await attempt(ledger, "DELETE FROM lookups")).toBe("refused");
    expect(await attempt(ledger, "SELECT * FROM webhook_endpoints")).toBe("refused");
  });
});

describe("the webhook-dispatcher's role", () => {
  it("reads events and writes deliveries, and nothing of accounts, keys or money", async () => {
    const dispatcher = await as("webhook-dispatcher");
    expect(await attempt(dispatcher, "SELECT count(*) FROM events")).toBe("allowed");
    expect(await attempt(dispatcher, "SELECT count(*) FROM webhook_deliveries")).toBe("allowed");
    for (const sql of ["SELECT * FROM accounts", "SELECT * FROM api_keys", "SELECT * FROM lookups", "SELECT * FROM ledger_entries", "UPDATE webhook_endpoints SET url = 'https://attacker.example/'"]) {
      expect(await attempt(dispatcher, sql)).toBe("refused");
    }
  });
});

describe("the check-worker's role", () => {
  it("settles and answers, but cannot mint keys or rename accounts", async () => {
    const worker = await as("check-worker");
    expect(await attempt(worker, "UPDATE accounts SET balance_micros = balance_micros WHERE id = $1", [accountId])).toBe("allowed");
    expect(await attempt(worker, "UPDATE accounts SET name = 'x' WHERE id = $1", [accountId])).toBe("refused");
    expect(await attempt(worker, "INSERT INTO api_keys (id, account_id, mode, key_hash, hint, scopes) VALUES ('key_x', $1, 'live', '\\x00', 'x', '{}')", [accountId])).toBe("refused");
  });

  it("makes month partitions through the owner's function alone: it owns no table, creates nothing itself, drops nothing", async () => {
    const worker = await as("check-worker");
    const { rows } = await worker.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'lookups'::regclass AND c.relname ~ '_p[0-9]{4}_[0-9]{2}$' LIMIT 1`,
    );
    for (const sql of [
      `DROP TABLE "${rows[0]?.name}"`,
      `ALTER TABLE lookups DETACH PARTITION "${rows[0]?.name}"`,
      "ALTER TABLE ledger_entries ADD COLUMN x int",
      "CREATE TABLE planted (x int)",
      "CREATE FUNCTION planted() RETURNS int LANGUAGE sql AS 'SELECT 1'",
      "CREATE TRIGGER planted AFTER INSERT ON lookups FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_cache()",
    ]) {
      expect(await attempt(worker, sql)).toBe("refused");
    }
    // The upkeep, as the check-worker runs it: the months two years ahead are made, owned by the schema owner.
    const own = createStore({ databaseUrl: serviceDatabaseUrl(env.databaseUrl, "check-worker"), poolSize: 2 });
    try {
      const future = new Date(Date.UTC(new Date().getUTCFullYear() + 2, 0, 15));
      expect(await ensureMonthPartitions(own.pool, future, 0)).toEqual([`${future.getUTCFullYear()}-01-01`]);
    } finally {
      await own.close();
    }
    const { rows: owners } = await store.pool.query<{ owner: string }>(
      `SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_class c WHERE c.relname ~ $1`,
      [`^(lookups|result_rows|events|delivery_attempts)_p${new Date().getUTCFullYear() + 2}_01$`],
    );
    const { rows: tableOwner } = await store.pool.query<{ owner: string }>(`SELECT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'ledger_entries'::regclass`);
    expect(owners).toEqual(tableOwner);
  });
});

describe("scripts/db-deploy.mjs", () => {
  const suffix = randomBytes(3).toString("hex");
  const names: Record<ServiceName, string> = {
    gateway: `svc_t_gw_${suffix}`,
    "check-worker": `svc_t_cw_${suffix}`,
    "billing-ledger": `svc_t_bl_${suffix}`,
    "webhook-dispatcher": `svc_t_wd_${suffix}`,
  };
  const database = `svc_t_${process.env.SVC_TEST_RUN_ID}_deploy${suffix}`;

  afterAll(async () => {
    await withAdmin(async (admin) => {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      for (const role of Object.values(names)) await admin.query(`DROP ROLE IF EXISTS "${role}"`);
    });
  });

  const deploy = (extra: Record<string, string>) =>
    spawnSync(process.execPath, [path.join(ROOT, "scripts", "db-deploy.mjs")], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: databaseUrl(database), ...extra },
      encoding: "utf8",
    });
  const urls = (password: string) =>
    Object.fromEntries(
      (Object.entries(names) as Array<[ServiceName, string]>).map(([service, role]) => {
        const u = new URL(databaseUrl(database));
        u.username = role;
        u.password = password;
        return [`${service.toUpperCase().replaceAll("-", "_")}_DATABASE_URL`, u.toString()];
      }),
    );

  it("migrates a new database, creates each service's role with its password, and never prints one; a second run changes nothing", async () => {
    await withAdmin((admin) => admin.query(`CREATE DATABASE "${database}"`));
    const first = deploy(urls("first-Secret-0042"));
    expect(first.status).toBe(0);
    expect(first.stdout + first.stderr).not.toContain("first-Secret-0042");
    expect(first.stdout).toContain(`gateway → ${names.gateway}`);
    const { rows } = await withAdmin((admin) =>
      admin.query<{ rolname: string; rolcanlogin: boolean; rolinherit: boolean; has_password: boolean }>(
        `SELECT rolname, rolcanlogin, rolinherit, rolpassword IS NOT NULL AS has_password FROM pg_authid WHERE rolname = ANY($1) ORDER BY rolname`,
        [Object.values(names)],
      ),
    );
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r).toMatchObject({ rolcanlogin: true, rolinherit: false, has_password: true });
    const second = deploy(urls("first-Secret-0042"));
    expect(second.status).toBe(0);
  }, 120_000);

  it("sends each password as a SCRAM verifier Postgres itself would make for it (never the password)", async () => {
    const { rows } = await withAdmin((admin) => admin.query<{ rolpassword: string }>(`SELECT rolpassword FROM pg_authid WHERE rolname = $1`, [names.gateway]));
    const stored = rows[0]?.rolpassword ?? "";
    expect(stored).toMatch(/^SCRAM-SHA-256\$4096:/);
    // Postgres' own verifier of the same password with the same salt: identical.
    const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored) ?? [];
    expect(scramVerifier("first-Secret-0042", Buffer.from(salt ?? "", "base64"), Number(iterations))).toBe(stored);
    const probe = `svc_t_scram_${suffix}`;
    await withAdmin(async (admin) => {
      await admin.query(`SET password_encryption = 'scram-sha-256'`);
      await admin.query(`CREATE ROLE ${probe} PASSWORD 'Another-Secret-77'`);
      try {
        const { rows: made } = await admin.query<{ rolpassword: string }>(`SELECT rolpassword FROM pg_authid WHERE rolname = $1`, [probe]);
        const [, n, s] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(made[0]?.rolpassword ?? "") ?? [];
        expect(scramVerifier("Another-Secret-77", Buffer.from(s ?? "", "base64"), Number(n))).toBe(made[0]?.rolpassword);
      } finally {
        await admin.query(`DROP ROLE ${probe}`);
      }
    });
  });

  it("takes back a grant someone added by hand", async () => {
    const owner = new pg.Client({ connectionString: databaseUrl(database) });
    await owner.connect();
    try {
      await owner.query(`GRANT INSERT ON ledger_entries TO "${names.gateway}"`);
      await owner.query(`GRANT UPDATE (balance_micros) ON accounts TO "${names.gateway}"`);
      expect(deploy(urls("first-Secret-0042")).status).toBe(0);
      const { rows } = await owner.query<{ ledger: boolean; balance: boolean }>(
        `SELECT has_table_privilege($1, 'ledger_entries', 'INSERT') AS ledger, has_column_privilege($1, 'accounts', 'balance_micros', 'UPDATE') AS balance`,
        [names.gateway],
      );
      expect(rows[0]).toEqual({ ledger: false, balance: false });
    } finally {
      await owner.end();
    }
  }, 60_000);

  it("refuses to run in production without each service's own URL, naming the missing setting", () => {
    const res = deploy({ NODE_ENV: "production", ...urls("x"), WEBHOOK_DISPATCHER_DATABASE_URL: "" });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("WEBHOOK_DISPATCHER_DATABASE_URL is not set");
  });
});
