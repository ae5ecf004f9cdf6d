import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { adminUrl } from "./pg-admin";

/**
 * A Postgres primary and a real streaming standby of it, both of the test's own:
 * `initdb` into a temporary directory, `pg_basebackup -R` for the standby, each on
 * a free loopback port, torn down with `stop()`. The machine's Postgres stays as it
 * is (its pg_hba.conf allows no replication connections). The primary gets a copy
 * of the run's migrated template (pg_dump | psql), as database `svc`.
 *
 * Needs the server binaries of the Postgres the tests use (`pg_config --bindir`);
 * as root, the servers run as the `postgres` user (Postgres refuses root).
 */
export type PgPair = { primaryUrl: string; standbyUrl: string; promote(): void; stop(): void };

function bindir(): string {
  const fromConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = fromConfig.status === 0 ? fromConfig.stdout.trim() : "";
  if (dir && existsSync(path.join(dir, "initdb"))) return dir;
  throw new Error("pg_config --bindir names no directory with initdb: install the Postgres server binaries (Debian: postgresql-15)");
}

export function startPgPair(ports: { primary: number; standby: number }): PgPair {
  const bin = bindir();
  const root = mkdtempSync(path.join(tmpdir(), "svc-pg-pair-"));
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()) : null;
  const group = asRoot ? Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()) : null;
  if (owner !== null && group !== null) chownSync(root, owner, group);
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    const res = spawnSync(file, argv, { encoding: "utf8", cwd: root, timeout: 60_000 });
    if (res.status !== 0) throw new Error(`${cmd} failed:\n${res.stdout}\n${res.stderr}`);
    return res.stdout;
  };
  const primaryDir = path.join(root, "primary");
  const standbyDir = path.join(root, "standby");
  const started: string[] = [];
  const stop = () => {
    for (const dir of started.reverse()) spawnSync(asRoot ? "runuser" : path.join(bin, "pg_ctl"), asRoot ? ["-u", "postgres", "--", path.join(bin, "pg_ctl"), "-D", dir, "-m", "immediate", "stop"] : ["-D", dir, "-m", "immediate", "stop"]);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    run("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
    // initdb's pg_hba.conf already lets loopback replication connections in with trust.
    writeFileSync(
      path.join(primaryDir, "postgresql.auto.conf"),
      [`port = ${ports.primary}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${root}'`, "wal_level = replica", "max_wal_senders = 4", "fsync = off", "shared_buffers = 16MB", ""].join("\n"),
    );
    run("pg_ctl", ["-D", primaryDir, "-l", path.join(root, "primary.log"), "-w", "start"]);
    started.push(primaryDir);
    run("pg_basebackup", ["-h", "127.0.0.1", "-p", String(ports.primary), "-U", "postgres", "-D", standbyDir, "-R", "-X", "stream", "--no-sync"]);
    // -R wrote primary_conninfo and standby.signal; the standby's own port and feedback go after.
    writeFileSync(path.join(standbyDir, "postgresql.auto.conf"), `port = ${ports.standby}\nhot_standby_feedback = on\n`, { flag: "a" });
    run("pg_ctl", ["-D", standbyDir, "-l", path.join(root, "standby.log"), "-w", "start"]);
    started.push(standbyDir);

    // The run's migrated template, as database `svc` on the primary (the standby replays it).
    const template = process.env.SVC_TEST_TEMPLATE_DB;
    if (!template) throw new Error("tests must run through jest's global setup (npm test)");
    const source = new URL(adminUrl());
    source.pathname = `/${template}`;
    const primary = `postgresql://postgres@127.0.0.1:${ports.primary}`;
    run("createdb", ["-h", "127.0.0.1", "-p", String(ports.primary), "-U", "postgres", "svc"]);
    const dump = spawnSync(path.join(bin, "pg_dump"), ["--no-owner", "--no-privileges", source.toString()], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    if (dump.status !== 0) throw new Error(`pg_dump of the template failed:\n${dump.stderr}`);
    const load = spawnSync(path.join(bin, "psql"), ["-q", "-v", "ON_ERROR_STOP=1", `${primary}/svc`], { input: dump.stdout, encoding: "utf8" });
    if (load.status !== 0) throw new Error(`loading the template failed:\n${load.stderr}`);
    // A failover tool's promotion: the standby stops following the primary and takes writes of its own.
    const promote = () => void run("pg_ctl", ["-D", standbyDir, "-w", "promote"]);
    return { primaryUrl: `${primary}/svc`, standbyUrl: `postgresql://postgres@127.0.0.1:${ports.standby}/svc`, promote, stop };
  } catch (err) {
    stop();
    throw err;
  }
}
