import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { databaseUrl, withAdmin } from "../support/pg-admin";

/**
 * Migration 20261126100000_result_rows_job_fill (no foreign key on result_rows.job_id,
 * partial unique indexes) applied to a database that already holds lookups, jobs and
 * their rows: they stay readable, and the old rows obey the new rules.
 */
const MIGRATIONS = path.resolve(__dirname, "..", "..", "prisma", "migrations");
const THIS = "20261126100000_result_rows_job_fill";
const migrations = readdirSync(MIGRATIONS).filter((m) => /^\d{14}_/.test(m)).sort();
const sqlOf = (m: string) => readFileSync(path.join(MIGRATIONS, m, "migration.sql"), "utf8");

const name = `svc_t_${process.env.SVC_TEST_RUN_ID ?? "x"}_mig${randomBytes(3).toString("hex")}`;
let db: pg.Client;

beforeAll(async () => {
  await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  db = new pg.Client({ connectionString: databaseUrl(name) });
  await db.connect();
  for (const m of migrations.slice(0, migrations.indexOf(THIS))) await db.query(sqlOf(m));
});
afterAll(async () => {
  await db.end();
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
});

const checks = JSON.stringify([{ service: "number.spam", status: "ok", registered: false, attributes: null, cached: false, billed: false, checked_at: null }]);

async function seed(): Promise<void> {
  await db.query(`INSERT INTO accounts (id, name) VALUES ('acc_1', 'one')`);
  await db.query(`INSERT INTO api_keys (id, account_id, mode, key_hash, hint) VALUES ('key_1', 'acc_1', 'test', '\\x01', 'sk_test_…0001')`);
  for (const job of ["job_a", "job_b"]) {
    await db.query(
      `INSERT INTO jobs (id, account_id, api_key_id, livemode, status, checks, total, checks_total, estimate, request_id, expires_at)
       VALUES ($1, 'acc_1', 'key_1', false, 'completed', '{number.spam}', 3, 3, '{}', 'req_1', now() + interval '30 days')`,
      [job],
    );
    await db.query(
      `INSERT INTO result_rows (job_id, row_no, kind, input_masked, e164, country, number_status, checks)
       SELECT $1, n, 'number', '+1202******0' || n, '+1202555010' || n, 'US', 'valid', $2::jsonb FROM generate_series(1, 3) n`,
      [job, checks],
    );
  }
  await db.query(
    `INSERT INTO lookups (id, account_id, api_key_id, livemode, status, row_count, checks_total, request_id, expires_at)
     VALUES ('lkp_1', 'acc_1', 'key_1', false, 'completed', 2, 2, 'req_2', now() + interval '30 days')`,
  );
  await db.query(
    `INSERT INTO result_rows (lookup_id, row_no, kind, input_masked, e164, country, number_status, checks)
     SELECT 'lkp_1', n, 'number', '+1202******0' || n, '+1202555010' || n, 'US', 'valid', $1::jsonb FROM generate_series(1, 2) n`,
    [checks],
  );
}

const rowsOf = async (column: "job_id" | "lookup_id", id: string) =>
  (await db.query<{ row_no: number; e164: string; checks: unknown }>(`SELECT row_no, e164, checks FROM result_rows WHERE ${column} = $1 ORDER BY row_no`, [id])).rows;

describe(`migration ${THIS} on a database with data`, () => {
  it("keeps every lookup, job and row readable, and the old rows obey the new rules", async () => {
    await seed();
    const before = { a: await rowsOf("job_id", "job_a"), b: await rowsOf("job_id", "job_b"), lookup: await rowsOf("lookup_id", "lkp_1") };
    expect(before.a).toHaveLength(3);

    await db.query(sqlOf(THIS));

    expect(await rowsOf("job_id", "job_a")).toEqual(before.a);
    expect(await rowsOf("job_id", "job_b")).toEqual(before.b);
    expect(await rowsOf("lookup_id", "lkp_1")).toEqual(before.lookup);
    expect(before.lookup[0]?.checks).toEqual(JSON.parse(checks));
    const { rows: parents } = await db.query(`SELECT (SELECT count(*)::int FROM jobs) AS jobs, (SELECT count(*)::int FROM lookups) AS lookups`);
    expect(parents[0]).toEqual({ jobs: 2, lookups: 1 });

    // An old job's row number is still taken; deleting an old job still deletes its rows, and only its.
    await expect(db.query(`INSERT INTO result_rows (job_id, row_no, kind, input_masked, checks) VALUES ('job_a', 2, 'number', 'x', '[]')`)).rejects.toMatchObject({ code: "23505" });
    await expect(db.query(`INSERT INTO result_rows (lookup_id, row_no, kind, input_masked, checks) VALUES ('lkp_1', 1, 'number', 'x', '[]')`)).rejects.toMatchObject({ code: "23505" });
    await db.query(`DELETE FROM jobs WHERE id = 'job_a'`);
    expect(await rowsOf("job_id", "job_a")).toEqual([]);
    expect(await rowsOf("job_id", "job_b")).toEqual(before.b);
    expect(await rowsOf("lookup_id", "lkp_1")).toEqual(before.lookup);
    // A lookup's rows keep their foreign key (deleted with it).
    await db.query(`DELETE FROM lookups WHERE id = 'lkp_1'`);
    expect(await rowsOf("lookup_id", "lkp_1")).toEqual([]);
    expect(await rowsOf("job_id", "job_b")).toEqual(before.b);
  });
});
