import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { databaseUrl, withAdmin } from "../support/pg-admin";

/**
 * `migrate deploy` killed part-way (issue 20 item 6): SIGKILL of its whole process
 * group, as when a container or a Job's pod is killed, and SIGTERM to
 * scripts/prisma.mjs alone, as `docker stop` and a roll-out send first. Each kill
 * happens while the migration is provably mid-way: the test holds a lock that a
 * statement of that migration needs, waits until the migration's session waits for
 * it, then kills. Afterwards the next `migrate deploy` must finish, `migrate status`
 * must be clean, and the schema must be the one an uninterrupted run makes.
 *
 * After the kill the test either keeps its lock until the killed run's session has
 * ended (the migration's transaction is rolled back) or releases it at once (the
 * orphaned session may go on and commit after its client died, which is what left
 * 20261121000000_init applied but unrecorded in the issue).
 */
const ROOT = path.resolve(__dirname, "..", "..");
const MIGRATIONS = readdirSync(path.join(ROOT, "prisma", "migrations"))
  .filter((m) => /^\d{14}_/.test(m))
  .sort();
const PRISMA_LOCK = 72707369;
const runId = process.env.SVC_TEST_RUN_ID ?? `${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const created: string[] = [];
const staged: string[] = [];

jest.setTimeout(60_000);

async function newDatabase(label: string): Promise<string> {
  const name = `svc_t_${runId}_mk${label}${randomBytes(2).toString("hex")}`;
  await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  created.push(name);
  return name;
}

afterAll(async () => {
  await withAdmin(async (c) => {
    for (const name of created) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  for (const dir of staged) rmSync(dir, { recursive: true, force: true });
});

async function connect(db: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl(db), application_name: "migrate-kill-test" });
  await client.connect();
  return client;
}

async function query<R extends pg.QueryResultRow>(db: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = await connect(db);
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

type Run = { child: ChildProcess; output: () => string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> };

/** `node scripts/prisma.mjs <args>` in a process group of its own (so the group can be killed), from `root`. */
function prisma(db: string, args: string[], root = ROOT): Run {
  const child = spawn(process.execPath, [path.join(root, "scripts", "prisma.mjs"), ...args], {
    cwd: root,
    detached: true,
    env: { ...process.env, DATABASE_URL: databaseUrl(db) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exit };
}

/** Whether any process of the group led by `pid` is still alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(test: () => Promise<boolean> | boolean, ms: number, interval = 25): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, interval));
  }
  return true;
}

/** A deploy that runs to the end, then `migrate status`: both must succeed. */
async function deployCleanly(db: string, root = ROOT): Promise<string> {
  const run = prisma(db, ["migrate", "deploy"], root);
  const { code } = await run.exit;
  expect({ code, output: run.output() }).toEqual({ code: 0, output: expect.stringMatching(/All migrations have been successfully applied|No pending migrations to apply/) });
  const status = prisma(db, ["migrate", "status"], root);
  const s = await status.exit;
  expect({ code: s.code, output: status.output() }).toEqual({ code: 0, output: expect.stringContaining("Database schema is up to date!") });
  return run.output();
}

/** Sessions in `db` other than the test's own: the migrating CLI's, or what is left of them. */
async function otherSessions(db: string): Promise<Array<{ pid: number; waiting: string | null; query: string }>> {
  return query(
    db,
    `SELECT pid, wait_event_type AS waiting, query FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> 'migrate-kill-test' AND backend_type = 'client backend'`,
  );
}

type Kill = "SIGKILL the group" | "SIGTERM the script";
type Release = "when its session has ended" | "at once";

/**
 * Starts `migrate deploy`, lets `block` (run in an open transaction of the test's)
 * stop it inside `migration`, kills it, then releases the block and waits until the
 * killed run's session has ended. Returns how the run ended and what `migration` left:
 * whether its row is finished.
 */
async function interrupt(db: string, migration: string, block: (c: pg.Client) => Promise<unknown>, kill: Kill, release: Release) {
  const blocker = await connect(db);
  await blocker.query("BEGIN");
  await block(blocker);
  const run = prisma(db, ["migrate", "deploy"]);
  const pid = run.child.pid!;
  let exited = false;
  void run.exit.then(() => (exited = true));
  let termination: { code: number | null; signal: NodeJS.Signals | null; groupGone: boolean } | null = null;
  let sessionEnded: boolean | null = null;
  try {
    // Mid-way: the migration's row is recorded as started and its script waits for our lock.
    const reached = await until(async () => {
      if (exited) return true;
      const rows = await query<{ migration_name: string }>(db, `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NULL AND rolled_back_at IS NULL`).catch(() => []);
      if (rows[0]?.migration_name !== migration) return false;
      return (await otherSessions(db)).some((s) => s.waiting === "Lock" && !s.query.includes(`pg_advisory_lock(${PRISMA_LOCK})`));
    }, 20_000);
    expect({ migration, reached, exited, output: exited ? run.output() : "" }).toEqual({ migration, reached: true, exited: false, output: "" });

    if (kill === "SIGKILL the group") {
      process.kill(-pid, "SIGKILL");
      await run.exit;
    } else {
      // docker stop / a roll-out: SIGTERM to the script only; the CLI must get it too.
      run.child.kill("SIGTERM");
      const ended = await Promise.race([run.exit, new Promise<null>((r) => setTimeout(() => r(null), 5_000))]);
      const groupGone = await until(() => !groupAlive(pid), 3_000);
      termination = { code: ended?.code ?? null, signal: ended?.signal ?? null, groupGone };
    }
    if (release === "when its session has ended") sessionEnded = await until(async () => (await otherSessions(db)).length === 0, 3_000, 50);
  } finally {
    if (groupAlive(pid)) process.kill(-pid, "SIGKILL");
    await blocker.query("ROLLBACK").catch(() => undefined);
    await blocker.end().catch(() => undefined);
  }
  // Released: a session of the killed run that is still there finishes or rolls back now.
  const settled = await until(async () => (await otherSessions(db)).length === 0, 5_000, 50);
  expect({ migration, settled }).toEqual({ migration, settled: true });
  const rows = await query<{ finished: boolean }>(db, `SELECT finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE migration_name = $1 AND rolled_back_at IS NULL`, [migration]);
  return { termination, sessionEnded, finished: rows.some((r) => r.finished) };
}

/** The schema as pg_dump prints it (its per-run \restrict key left out). */
function schemaOf(db: string): string {
  const dump = spawnSync("pg_dump", ["--schema-only", "--no-owner", "--no-privileges", databaseUrl(db)], { encoding: "utf8" });
  if (dump.status !== 0) throw new Error(`pg_dump failed: ${dump.stderr}`);
  return dump.stdout
    .split("\n")
    .filter((l) => !/^\\(un)?restrict /.test(l))
    .join("\n");
}

/** Catalog facts pg_dump does not print: enum values' order, indexes' validity. */
async function catalogOf(db: string) {
  const [enums, indexes] = await Promise.all([
    query(db, `SELECT t.typname, e.enumlabel, e.enumsortorder::text FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid ORDER BY 1, 3`),
    query(db, `SELECT c.relname, i.indisvalid, i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1`),
  ]);
  return { enums, indexes };
}

async function appliedMigrations(db: string): Promise<string[]> {
  const rows = await query<{ migration_name: string }>(db, `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`);
  return rows.map((r) => r.migration_name);
}

/**
 * A copy of the project's migration tooling (scripts/prisma.mjs, prisma.config.ts,
 * the schema) whose prisma/migrations holds `migrations` and any `extra` ones; its
 * node_modules is the repository's.
 */
function stage(migrations: string[], extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), "svc-migrate-kill-"));
  staged.push(dir);
  mkdirSync(path.join(dir, "scripts"));
  mkdirSync(path.join(dir, "prisma", "migrations"), { recursive: true });
  for (const f of ["scripts/prisma.mjs", "scripts/prisma-wasm-timers.cjs", "prisma.config.ts", "package.json", "prisma/schema.prisma", "prisma/migrations/migration_lock.toml"]) {
    cpSync(path.join(ROOT, f), path.join(dir, f));
  }
  for (const m of migrations) cpSync(path.join(ROOT, "prisma", "migrations", m), path.join(dir, "prisma", "migrations", m), { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, "prisma", "migrations", name));
    writeFileSync(path.join(dir, "prisma", "migrations", name, "migration.sql"), sql);
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  return dir;
}

let reference: { schema: string; catalog: Awaited<ReturnType<typeof catalogOf>> };

beforeAll(async () => {
  const db = await newDatabase("ref");
  await deployCleanly(db);
  reference = { schema: schemaOf(db), catalog: await catalogOf(db) };
});

async function expectLikeUninterrupted(db: string) {
  expect(await appliedMigrations(db)).toEqual(MIGRATIONS);
  expect(await catalogOf(db)).toEqual(reference.catalog);
  expect(schemaOf(db)).toEqual(reference.schema);
}

const FIRST = MIGRATIONS[0]!;
// The init's first enum waits while the test holds pg_enum: after Prisma recorded the
// migration as started and created its schema, before any table.
const holdEnums = (c: pg.Client) => c.query(`LOCK TABLE pg_catalog.pg_enum IN EXCLUSIVE MODE`);
const INIT_TABLES = (readFileSync(path.join(ROOT, "prisma", "migrations", FIRST, "migration.sql"), "utf8").match(/^CREATE TABLE /gm) ?? []).length;
const initTables = async (db: string) =>
  (await query<{ n: number }>(db, `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`))[0]!.n;

describe("migrate deploy killed on a fresh database", () => {
  test(`SIGKILL of the process group inside ${FIRST}, lock kept until the killed session ended: the next deploy applies everything`, async () => {
    const db = await newDatabase("f1");
    const killed = await interrupt(db, FIRST, holdEnums, "SIGKILL the group", "when its session has ended");
    // The killed CLI's session notices its client is gone and rolls back by itself.
    expect(killed.sessionEnded).toBe(true);
    expect({ finished: killed.finished, tables: await initTables(db) }).toEqual({ finished: false, tables: 0 });
    await deployCleanly(db);
    await expectLikeUninterrupted(db);
  });

  test(`SIGKILL of the process group inside ${FIRST}, lock released at once (the orphaned session may commit): the next deploy applies everything`, async () => {
    const db = await newDatabase("f2");
    const killed = await interrupt(db, FIRST, holdEnums, "SIGKILL the group", "at once");
    // All or nothing, and its row says which.
    expect({ finished: killed.finished, tables: await initTables(db) }).toEqual(killed.finished ? { finished: true, tables: INIT_TABLES } : { finished: false, tables: 0 });
    await deployCleanly(db);
    await expectLikeUninterrupted(db);
  });

  test(`SIGTERM to scripts/prisma.mjs inside ${FIRST}: the CLI gets it, the script ends by SIGTERM, the next deploy applies everything`, async () => {
    const db = await newDatabase("f3");
    const killed = await interrupt(db, FIRST, holdEnums, "SIGTERM the script", "when its session has ended");
    expect(killed.termination).toEqual({ code: null, signal: "SIGTERM", groupGone: true });
    expect(killed.sessionEnded).toBe(true);
    expect({ finished: killed.finished, tables: await initTables(db) }).toEqual({ finished: false, tables: 0 });
    await deployCleanly(db);
    await expectLikeUninterrupted(db);
  });
});

describe("migrate deploy killed on a populated database", () => {
  const PARTITION = "20261127100000_partition_by_month";
  const EVENTS = "20261127110000_partition_events";
  const BYTEWISE = "20261127120000_jobs_id_bytewise";
  const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(PARTITION));

  /** A few rows of every kind the later migrations move, written as the release before them wrote them. */
  async function populate(db: string) {
    const c = await connect(db);
    try {
      await c.query(`INSERT INTO accounts (id, name) VALUES ('acc_a', 'A'), ('acc_b', 'B')`);
      await c.query(`INSERT INTO api_keys (id, account_id, mode, key_hash, hint) VALUES ('key_a', 'acc_a', 'test', '\\x01', 'a'), ('key_b', 'acc_b', 'test', '\\x02', 'b')`);
      const week = new Date(Date.now() + 7 * 86_400_000);
      for (let n = 0; n < 6; n++) {
        const owner = n % 2 ? ["acc_b", "key_b"] : ["acc_a", "key_a"];
        const id = `lkp_${randomBytes(11).toString("hex")}`;
        await c.query(
          `INSERT INTO lookups (id, account_id, api_key_id, livemode, status, checks, row_count, checks_total, checks_done, request_id, created_at, completed_at, expires_at)
           VALUES ($1, $2, $3, false, 'completed', '{number.spam}', 2, 2, 2, 'req_old', now(), now(), $4)`,
          [id, owner[0], owner[1], week],
        );
        await c.query(
          `INSERT INTO result_rows (lookup_id, row_no, kind, input_masked, e164, country, number_status, checks, pending_checks)
           SELECT $1, r, 'phone', '+1415555****', '+14155550100', 'US', 'valid', '[]', 0 FROM generate_series(1, 2) r`,
          [id],
        );
        const job = `job_${randomBytes(11).toString("hex")}`;
        await c.query(
          `INSERT INTO jobs (id, account_id, api_key_id, livemode, status, checks, total, checks_total, done, conclusive, chunk_count, estimate, request_id, created_at, finished_at, expires_at)
           VALUES ($1, $2, $3, false, 'completed', '{number.spam}', 3, 3, 3, 3, 1, '{}', 'req_old', now(), now(), $4)`,
          [job, owner[0], owner[1], week],
        );
        await c.query(
          `INSERT INTO result_rows (job_id, row_no, kind, input_masked, e164, country, number_status, checks, pending_checks)
           SELECT $1, r, 'phone', '+1415555****', '+14155550100', 'US', 'valid', '[]', 0 FROM generate_series(1, 3) r`,
          [job],
        );
      }
      await c.query(
        `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ('we_old', 'acc_a', false, 'https://hooks.example/in', '{lookup.completed}', 'active', '\\x00')`,
      );
      for (let n = 0; n < 4; n++) {
        const id = `evt_${randomBytes(11).toString("hex")}`;
        await c.query(`INSERT INTO events (id, account_id, livemode, type, data, endpoint_id, created_at, dispatched_at) VALUES ($1, 'acc_a', false, 'webhook.test', '{}', 'we_old', now(), now())`, [id]);
        const { rows } = await c.query<{ id: string }>(
          `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, created_at, updated_at) VALUES ($1, 'we_old', 'succeeded', 1, now(), now()) RETURNING id::text`,
          [id],
        );
        await c.query(`INSERT INTO delivery_attempts (delivery_id, attempt_no, started_at, duration_ms, status_code, succeeded) VALUES ($1::bigint, 1, now(), 10, 200, true)`, [rows[0]!.id]);
      }
    } finally {
      await c.end();
    }
  }

  const counts = (db: string) =>
    query(
      db,
      `SELECT (SELECT count(*)::int FROM accounts) AS accounts, (SELECT count(*)::int FROM lookups) AS lookups, (SELECT count(*)::int FROM jobs) AS jobs,
              (SELECT count(*)::int FROM result_rows) AS result_rows, (SELECT count(*)::int FROM events) AS events,
              (SELECT count(*)::int FROM webhook_deliveries) AS deliveries, (SELECT count(*)::int FROM delivery_attempts) AS attempts`,
    );

  test(`built at ${before[before.length - 1]} with rows, then killed inside ${PARTITION}, ${EVENTS} and ${BYTEWISE}: every next deploy resumes, data and schema as uninterrupted`, async () => {
    // The uninterrupted twin: the same rows, all migrations in one go.
    const twin = await newDatabase("p0");
    const db = await newDatabase("p1");
    const earlier = stage(before);
    for (const d of [twin, db]) {
      await deployCleanly(d, earlier);
      expect(await appliedMigrations(d)).toEqual(before);
      await populate(d);
    }
    const rowsBefore = await counts(db);
    await deployCleanly(twin);

    // Inside partition_by_month, after its renames: its foreign key to accounts waits for our lock.
    const a = await interrupt(db, PARTITION, (c) => c.query(`LOCK TABLE accounts IN ROW EXCLUSIVE MODE`), "SIGKILL the group", "when its session has ended");
    expect({ sessionEnded: a.sessionEnded, finished: a.finished }).toEqual({ sessionEnded: true, finished: false });
    expect(await appliedMigrations(db)).toEqual(before);
    expect(await query(db, `SELECT to_regclass('lookups_legacy') IS NULL AS untouched`)).toEqual([{ untouched: true }]);
    expect(await counts(db)).toEqual(rowsBefore);

    // Inside partition_events, after it renamed events: renaming delivery_attempts waits for our reader. Released at once.
    const b = await interrupt(db, EVENTS, (c) => c.query(`LOCK TABLE delivery_attempts IN ACCESS SHARE MODE`), "SIGKILL the group", "at once");
    // All or nothing, and its row says which.
    expect(await query(db, `SELECT to_regclass('events_legacy') IS NOT NULL AS applied, to_regclass('delivery_attempts_legacy') IS NOT NULL AS whole`)).toEqual([{ applied: b.finished, whole: b.finished }]);

    // Inside jobs_id_bytewise: its index build waits for our writer's lock. SIGTERM this time.
    const c = await interrupt(db, BYTEWISE, (cl) => cl.query(`LOCK TABLE jobs IN ROW EXCLUSIVE MODE`), "SIGTERM the script", "when its session has ended");
    expect(c.termination).toEqual({ code: null, signal: "SIGTERM", groupGone: true });
    expect({ sessionEnded: c.sessionEnded, finished: c.finished }).toEqual({ sessionEnded: true, finished: false });
    expect(await query(db, `SELECT to_regclass('jobs_id_bytewise_idx') IS NULL AS untouched`)).toEqual([{ untouched: true }]);

    await deployCleanly(db);
    expect(await appliedMigrations(db)).toEqual(MIGRATIONS);
    expect(await counts(db)).toEqual(rowsBefore);
    expect(await counts(twin)).toEqual(rowsBefore);
    expect(await catalogOf(db)).toEqual(await catalogOf(twin));
    expect(schemaOf(db)).toEqual(schemaOf(twin));
  });
});

describe("a non-transactional migration killed part-way", () => {
  // Not in the repository's history: staged beside it, after its last migration.
  const CIC = "29990101000000_svc_test_concurrent_index";
  const DETACH = "29990101000100_svc_test_detach_concurrently";
  const extra = {
    [CIC]: `-- svc-migrate: non-transactional\n-- An index built without blocking writes.\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_test_created_idx" ON "jobs" ("created_at");\n`,
    [DETACH]: `-- svc-migrate: non-transactional\nALTER TABLE "lookups" DETACH PARTITION "lookups_legacy" CONCURRENTLY;\n`,
  };

  test("CREATE INDEX CONCURRENTLY killed while it waits (an INVALID index left), DETACH PARTITION CONCURRENTLY killed in its second phase: the next deploys finish both", async () => {
    const root = stage(MIGRATIONS, extra);
    const db = await newDatabase("n1");
    await deployCleanly(db);
    /** A staged deploy stopped inside `migration` by `block`, SIGKILLed; the block is released once its session ended. */
    const killInside = async (migration: string, waiting: string, block: (c: pg.Client) => Promise<unknown>): Promise<string> => {
      const blocker = await connect(db);
      await blocker.query("BEGIN");
      await block(blocker);
      const r = prisma(db, ["migrate", "deploy"], root);
      try {
        const reached = await until(async () => {
            const rows = await query<{ migration_name: string }>(db, `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NULL AND rolled_back_at IS NULL`);
            return rows[0]?.migration_name === migration && (await otherSessions(db)).some((s) => s.waiting === "Lock" && s.query.includes(waiting));
          },
          20_000,
        );
        expect({ migration, reached, output: reached ? "" : r.output() }).toEqual({ migration, reached: true, output: "" });
        process.kill(-r.child.pid!, "SIGKILL");
        await r.exit;
        expect(await until(async () => (await otherSessions(db)).length === 0, 3_000, 50)).toBe(true);
        return r.output();
      } finally {
        if (groupAlive(r.child.pid!)) process.kill(-r.child.pid!, "SIGKILL");
        await blocker.query("ROLLBACK").catch(() => undefined);
        await blocker.end().catch(() => undefined);
      }
    };
    const validity = () => query(db, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('jobs_test_created_idx')`);
    const attached = () => query(db, `SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = 'lookups_legacy'::regclass`);

    // The build committed its catalog entry and waits for our writer of jobs.
    await killInside(CIC, "CONCURRENTLY IF NOT EXISTS", (c) => c.query(`LOCK TABLE jobs IN ROW EXCLUSIVE MODE`));
    expect(await validity()).toEqual([{ indisvalid: false }]);

    // The next deploy drops the INVALID index and builds it again, then its detach committed
    // its first phase and waits for our reader of lookups.
    const output = await killInside(DETACH, "DETACH PARTITION", (c) => c.query(`SELECT count(*) FROM lookups`));
    expect(output).toContain(`dropped the invalid index "jobs_test_created_idx"`);
    expect(await validity()).toEqual([{ indisvalid: true }]);
    expect(await attached()).toEqual([{ inhdetachpending: true }]);

    // The next deploy finalizes the detach and records the migration applied.
    expect(await deployCleanly(db, root)).toContain("the detach is finalized and the migration marked applied");
    expect(await attached()).toEqual([]);
    expect(await appliedMigrations(db)).toEqual([...MIGRATIONS, CIC, DETACH]);
  });
});

// Every migration in the repository ends with the statement that records it in its own
// transaction (or declares itself non-transactional): without it, a run killed after the
// commit cannot be told from one killed before, and a kill needs a hand to repair.
test("every migration marks its own _prisma_migrations row finished in its transaction", () => {
  for (const m of MIGRATIONS) {
    const sql = readFileSync(path.join(ROOT, "prisma", "migrations", m, "migration.sql"), "utf8");
    const marked = sql.includes(`WHERE "migration_name" = '${m}' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;`);
    expect({ migration: m, marked: marked || /^--\s*svc-migrate:\s*non-transactional\b/m.test(sql) }).toEqual({ migration: m, marked: true });
  }
});
