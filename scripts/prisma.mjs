#!/usr/bin/env node
// Runs the Prisma CLI offline-safe: the CLI uses the WebAssembly schema engine and
// the pg driver adapter (prisma.config.ts), so native engines are never needed.
// Pointing the engine variables at an existing file stops the CLI from trying to
// download them (which fails without internet and is pointless with it).
//
// The CLI runs as a child that gets our SIGINT, SIGTERM and SIGHUP (Ctrl-C, `docker
// stop`, a Job replaced by a roll-out), and we end the way it ended: its exit code,
// or killed by the same signal.
//
// `migrate deploy` is made safe to interrupt (docs/operations.md, "Rolling out a
// migration"):
// - Every migration is all-or-nothing: prisma.config.ts sends a migration's script as
//   one query, which Postgres runs as one transaction, and each script's last
//   statement marks its own `_prisma_migrations` row finished inside that
//   transaction. A row left unfinished by a killed run therefore proves that nothing
//   of the script was committed.
// - Before deploying, rows left unfinished by an interrupted or failed run are
//   resolved here once that is proven (under Prisma's advisory lock, after every
//   session of the interrupted run has ended): a transactional migration is marked
//   rolled back, so `migrate deploy` applies it again; a non-transactional one
//   (`-- svc-migrate: non-transactional`, one re-runnable statement) has what a killed
//   run leaves behind cleaned up first. A row that cannot be proven is left alone
//   and explained (Prisma then stops with P3009 as before).
// - The CLI's sessions ask Postgres to check their client while a statement runs
//   (client_connection_check_interval), so a session whose migrating process was
//   killed is rolled back within a second instead of running on, holding locks.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const hook = path.join(root, "scripts", "prisma-wasm-timers.cjs");
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_QUERY_ENGINE_LIBRARY: process.env.PRISMA_QUERY_ENGINE_LIBRARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: "1",
  CHECKPOINT_DISABLE: "1",
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${hook}`.trim(),
};
// DATABASE_URL from the environment, or the documented default (never from .env.local: it holds secrets only).
env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/svc_validate";

/** Prisma Migrate's advisory lock key (schema engine, PostgresFlavour::acquire_lock). */
const PRISMA_LOCK = 72707369;
/** application_name of the CLI's sessions while it deploys, so a later run can wait for them to end. */
const MIGRATOR = "svc-migrate";
/** How long a deploy waits for an interrupted run's sessions to end before it gives up recovering. */
const RECOVERY_WAIT_MS = 30_000;
const MIGRATIONS = path.join(root, "prisma", "migrations");
const say = (line) => process.stderr.write(`prisma.mjs: ${line}\n`);

/**
 * Resolves `_prisma_migrations` rows that an interrupted or failed `migrate deploy`
 * left unfinished, where it can prove what happened. Returns the server's version
 * number (server_version_num).
 */
async function recoverInterruptedMigrations(url) {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, application_name: "svc-migrate-recovery" });
  client.on("error", () => undefined);
  await client.connect();
  try {
    const { rows: [server] } = await client.query(
      `SELECT current_setting('server_version_num')::int AS version, to_regclass('_prisma_migrations') IS NOT NULL AS managed`,
    );
    const unfinished = async () =>
      server.managed
        ? (await client.query(`SELECT id, migration_name, checksum, logs FROM "_prisma_migrations" WHERE finished_at IS NULL AND rolled_back_at IS NULL ORDER BY started_at`)).rows
        : [];
    if ((await unfinished()).length === 0) return server.version;

    // The interrupted run must be over: no session may still be running (and later
    // commit) a script. Its sessions held Prisma's lock, and carry MIGRATOR as their
    // name; sessions only waiting for the lock have not started anything.
    const deadline = Date.now() + RECOVERY_WAIT_MS;
    const waitFor = async (test) => {
      while (!(await test())) {
        if (Date.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 100));
      }
      return true;
    };
    const locked = await waitFor(async () => (await client.query(`SELECT pg_try_advisory_lock($1) AS ok`, [PRISMA_LOCK])).rows[0].ok);
    const quiet =
      locked &&
      (await waitFor(async () => {
        const { rows } = await client.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1
              AND state <> 'idle' AND NOT (wait_event_type = 'Lock' AND wait_event = 'advisory')`,
          [MIGRATOR],
        );
        return rows[0].n === 0;
      }));
    if (!quiet) {
      say(`another migrate deploy is still running on this database (or a killed one's session has not ended after ${RECOVERY_WAIT_MS / 1000} s); its unfinished migrations are left alone`);
      return server.version;
    }
    for (const row of await unfinished()) await resolveRow(client, row);
    return server.version;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One unfinished row: rolled back, marked applied, or left alone with the reason. */
async function resolveRow(client, row) {
  const name = row.migration_name;
  const how = row.logs ? "failed" : "was interrupted";
  const leave = (why) =>
    say(
      `migration ${name} ${how} and is left as it is: ${why}. Check the database by hand, then run ` +
        `\`npm run prisma -- migrate resolve --rolled-back ${name}\` (nothing of it applied) or \`--applied ${name}\` (all of it applied).`,
    );
  const file = path.join(MIGRATIONS, name, "migration.sql");
  if (!existsSync(file)) return leave(`prisma/migrations/${name}/migration.sql does not exist here`);
  const script = readFileSync(file, "utf8");
  const sums = new Set([script, script.replace(/\r\n/g, "\n"), script.replace(/\r?\n/g, "\r\n")].map((s) => createHash("sha256").update(s).digest("hex")));
  if (!sums.has(row.checksum)) return leave("the script that ran differs from the one in prisma/migrations (checksum), so it cannot be told what it did");
  const statements = statementsOf(script);
  const rolledBack = () => client.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = $1`, [row.id]);

  if (/^--\s*svc-migrate:\s*non-transactional\b/m.test(script)) {
    if (statements.length !== 1) return leave("a non-transactional migration must hold exactly one statement");
    const statement = statements[0];
    const index = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+IF\s+NOT\s+EXISTS\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s/i.exec(statement);
    const detach = /^ALTER\s+TABLE\s+(?:ONLY\s+)?("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s+DETACH\s+PARTITION\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*)\s+CONCURRENTLY$/i.exec(statement);
    if (index) {
      // A killed CONCURRENTLY build leaves an INVALID index that IF NOT EXISTS would keep.
      const { rows } = await client.query(`SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, [identifier(index[1])]);
      if (rows[0] && !rows[0].indisvalid) {
        await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${identifier(index[1])}`);
        say(`migration ${name}: dropped the invalid index ${index[1]} its interrupted build left`);
      }
      await rolledBack();
      return say(`migration ${name} ${how}; it is non-transactional and re-runnable (CREATE INDEX CONCURRENTLY IF NOT EXISTS), marked rolled back to run again`);
    }
    if (detach) {
      const [parent, partition] = [identifier(detach[1]), identifier(detach[2])];
      const { rows } = await client.query(`SELECT inhdetachpending AS pending FROM pg_inherits WHERE inhrelid = to_regclass($1) AND inhparent = to_regclass($2)`, [partition, parent]);
      if (rows[0] && !rows[0].pending) {
        await rolledBack();
        return say(`migration ${name} ${how} before its detach started; marked rolled back to run again`);
      }
      if (rows[0]?.pending) await client.query(`ALTER TABLE ${parent} DETACH PARTITION ${partition} FINALIZE`);
      const { rows: still } = await client.query(`SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass($1) AND inhparent = to_regclass($2)`, [partition, parent]);
      if (still.length > 0 || !(await client.query(`SELECT to_regclass($1) AS r`, [partition])).rows[0].r) return leave(`${detach[2]} is not where the detach would leave it`);
      await markApplied(client, row, script);
      return say(`migration ${name} ${how} during its detach; the detach is finalized and the migration marked applied`);
    }
    if (/^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\b|\bDETACH\s+PARTITION\b/i.test(statement))
      return leave("a non-transactional index build must read CREATE INDEX CONCURRENTLY IF NOT EXISTS <name>, a detach ALTER TABLE <parent> DETACH PARTITION <name> CONCURRENTLY (unqualified names)");
    await rolledBack();
    return say(`migration ${name} ${how}; it is declared non-transactional and re-runnable, marked rolled back to run again`);
  }

  const control = statements.find((s) => /^(BEGIN|COMMIT|END|ROLLBACK|ABORT|START\s+TRANSACTION|SAVEPOINT|RELEASE|PREPARE\s+TRANSACTION|COMMIT\s+PREPARED)\b/i.test(s));
  if (control) return leave(`its script controls transactions itself (${control.split(/\s/)[0]}), so it may have been applied in part`);
  if (!statements.some((s) => normalized(s) === normalized(finishedMarker(name))))
    return leave(`its script does not mark its own row finished (the statement docs/operations.md asks every migration to end with), so a run killed after its commit cannot be told from one killed before`);
  await rolledBack();
  say(`migration ${name} ${how} and was rolled back by Postgres (its one transaction never committed); marked rolled back to run again`);
}

/** What `prisma migrate resolve --applied` records: the failed row rolled back, a finished row beside it. */
async function markApplied(client, row, script) {
  await client.query(`UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = $1`, [row.id]);
  await client.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES (gen_random_uuid()::text, $1, $2, now(), now(), 1)`,
    [createHash("sha256").update(script).digest("hex"), row.migration_name],
  );
}

/** The statement each transactional migration ends with (docs/operations.md, "Rolling out a migration"). */
function finishedMarker(name) {
  return `DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '${name}' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$`;
}

const normalized = (sql) => sql.replace(/\s+/g, " ").trim();
const identifier = (name) => (name.startsWith('"') ? name : `"${name.toLowerCase()}"`);

/** A script's statements, without comments; quoted text and dollar-quoted bodies are kept whole. */
function statementsOf(sql) {
  const out = [];
  let current = "";
  let i = 0;
  const endOf = (close, from) => {
    const at = sql.indexOf(close, from);
    return at < 0 ? sql.length : at + close.length;
  };
  while (i < sql.length) {
    const c = sql[i];
    let next;
    if (c === "-" && sql[i + 1] === "-") {
      i = endOf("\n", i);
      current += " ";
      continue;
    }
    if (c === "/" && sql[i + 1] === "*") {
      let depth = 1;
      next = i + 2;
      while (next < sql.length && depth > 0) {
        if (sql.startsWith("/*", next)) (depth += 1), (next += 2);
        else if (sql.startsWith("*/", next)) (depth -= 1), (next += 2);
        else next += 1;
      }
      i = next;
      current += " ";
      continue;
    }
    if (c === "'" || c === '"') {
      next = i + 1;
      for (;;) {
        next = endOf(c, next);
        if (sql[next] !== c) break;
        next += 1;
      }
    } else if (c === "$") {
      const tag = /^\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$/.exec(sql.slice(i, i + 64))?.[0];
      next = tag ? endOf(tag, i + tag.length) : i + 1;
    } else if (c === ";") {
      if (current.trim()) out.push(current.trim());
      current = "";
      i += 1;
      continue;
    } else next = i + 1;
    current += sql.slice(i, next);
    i = next;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

// The command: recovery first when it deploys, then the CLI as a child that gets our signals.
const args = process.argv.slice(2);
if (args[0] === "migrate" && args[1] === "deploy") {
  let serverVersion = 0;
  try {
    serverVersion = await recoverInterruptedMigrations(env.DATABASE_URL);
  } catch (err) {
    say(`could not check for interrupted migrations (${err.message}); running migrate deploy as it is`);
  }
  env.PGAPPNAME = MIGRATOR;
  // Postgres 14+: a session whose client is gone stops at its next check (also while it
  // waits for a lock) and rolls back. Older servers do not know the setting.
  if (serverVersion >= 140000) env.PGOPTIONS = `${env.PGOPTIONS ?? ""} -c client_connection_check_interval=500`.trim();
}

const cli = path.join(root, "node_modules", "prisma", "build", "index.js");
const child = spawn(process.execPath, [cli, ...args], { cwd: root, env, stdio: "inherit" });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const pass = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of forwarded) process.on(signal, pass);
child.on("error", (err) => {
  say(`could not start the Prisma CLI: ${err.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (code !== null) process.exit(code);
  // Killed by a signal: end the same way, so whoever waits on us sees what happened.
  for (const s of forwarded) process.removeListener(s, pass);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 100);
});
