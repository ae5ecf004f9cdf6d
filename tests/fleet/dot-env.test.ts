import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { redisUserName } from "@svc/queues";
import { createStore, DEFAULT_SERVICE_ROLES, SERVICES } from "@svc/store";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * `.env.local` holds the secrets `npm run up` generates and nothing else: a fleet
 * started with another DATABASE_URL must not leave that URL (or the default) for
 * the admin CLI of a later shell to pick up silently.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const LIB = path.join(ROOT, "scripts", "lib.mjs");
const CLI = path.join(ROOT, "packages", "admin", "dist", "cli.js");
const SERVICE_PASSWORDS = ["GATEWAY", "CHECK_WORKER", "BILLING_LEDGER", "WEBHOOK_DISPATCHER"].flatMap((s) => [`${s}_DATABASE_PASSWORD`, `${s}_REDIS_PASSWORD`]);
const SECRETS = ["KEY_HASH_SECRET", "CACHE_HASH_SECRET", "DATA_ENCRYPTION_KEY", "FLEET_MESSAGE_KEY", ...SERVICE_PASSWORDS];
const OTHER_DB = "postgresql://postgres:up-Secret-4411@127.0.0.1:5432/svc_other_checkout";

let env: TestEnv;
let dir: string;
beforeAll(async () => {
  env = await createTestEnv();
});
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "svc-dotenv-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `npm run up`'s ensureDotEnv (scripts/lib.mjs) for a checkout at `dir`, in `vars` only. */
function ensureDotEnv(vars: Record<string, string>) {
  const code = `import { ensureDotEnv } from ${JSON.stringify(LIB)}; ensureDotEnv(process.argv[1]);`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", code, dir], { env: { PATH: process.env.PATH ?? "", ...vars }, encoding: "utf8" });
  expect(res.stderr).toBe("");
  expect(res.status).toBe(0);
  return readFileSync(path.join(dir, ".env.local"), "utf8");
}

const settings = (text: string) => text.split("\n").filter((l) => /^[A-Z0-9_]+=/.test(l)).map((l) => l.split("=")[0]);

describe("npm run up's .env.local", () => {
  it("holds the generated secrets and no connection setting, when up ran with another DATABASE_URL", () => {
    const text = ensureDotEnv({ DATABASE_URL: OTHER_DB, REDIS_URL: "redis://127.0.0.1:6380", REDIS_PREFIX: "other" });
    expect(settings(text).sort()).toEqual([...SECRETS].sort());
    expect(text).not.toContain("svc_other_checkout");
    expect(text).not.toMatch(/DATABASE_URL=|REDIS_URL=|REDIS_PREFIX=/);
    expect(statSync(path.join(dir, ".env.local")).mode & 0o777).toBe(0o600);
  });

  it("is made private (0600) even when it already existed with a looser mode, and keeps its values", () => {
    const file = path.join(dir, ".env.local");
    writeFileSync(file, `KEY_HASH_SECRET=${"k".repeat(64)}\n`, { mode: 0o644 });
    chmodSync(file, 0o644); // whatever the umask made of it
    const text = ensureDotEnv({});
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(text).toContain(`KEY_HASH_SECRET=${"k".repeat(64)}\n`);
    // Already complete: still made private.
    chmodSync(file, 0o664);
    expect(ensureDotEnv({})).toBe(text);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("is neither read nor written when the shared secrets and each service's own URLs are in the environment (tests, containers)", () => {
    const vars: Record<string, string> = { KEY_HASH_SECRET: "k".repeat(64), CACHE_HASH_SECRET: "c".repeat(64), DATA_ENCRYPTION_KEY: "d".repeat(44), FLEET_MESSAGE_KEY: "f".repeat(44) };
    for (const s of ["GATEWAY", "CHECK_WORKER", "BILLING_LEDGER", "WEBHOOK_DISPATCHER"]) Object.assign(vars, { [`${s}_DATABASE_URL`]: OTHER_DB, [`${s}_REDIS_URL`]: "redis://u:p@127.0.0.1:6379" });
    const code = `import { ensureDotEnv } from ${JSON.stringify(LIB)}; ensureDotEnv(process.argv[1]);`;
    const res = spawnSync(process.execPath, ["--input-type=module", "-e", code, dir], { env: { PATH: process.env.PATH ?? "", ...vars }, encoding: "utf8" });
    expect(res.status).toBe(0);
    expect(existsSync(path.join(dir, ".env.local"))).toBe(false);
  });

  it("drops the connection settings an older version wrote, keeping its secrets", () => {
    writeFileSync(path.join(dir, ".env.local"), `KEY_HASH_SECRET=${"k".repeat(64)}\nDATABASE_URL=${OTHER_DB}\nREDIS_URL=redis://127.0.0.1:6379\nREDIS_PREFIX=svc\n`);
    const text = ensureDotEnv({});
    expect(settings(text).sort()).toEqual([...SECRETS].sort());
    expect(text).toContain(`KEY_HASH_SECRET=${"k".repeat(64)}\n`);
    expect(text).not.toContain("svc_other_checkout");
  });
});

describe("npm run up's service logins (scripts/lib.mjs serviceConnections)", () => {
  /** serviceConnections of scripts/lib.mjs in `vars`, as npm run up computes them. */
  function connections(vars: Record<string, string>): Record<string, { DATABASE_URL: string; REDIS_URL: string }> {
    const code = `import { serviceConnections } from ${JSON.stringify(LIB)}; process.stdout.write(JSON.stringify(serviceConnections(process.env)));`;
    const res = spawnSync(process.execPath, ["--input-type=module", "-e", code], { env: { PATH: process.env.PATH ?? "", ...vars }, encoding: "utf8" });
    expect(res.status).toBe(0);
    return JSON.parse(res.stdout);
  }

  it("name each service's database role and Redis user as db-deploy and redis-acl make them, with its own password, URL-encoded", () => {
    const got = connections({ DATABASE_URL: OTHER_DB, REDIS_URL: "redis://operator:op-pass@127.0.0.1:6380/2", REDIS_PREFIX: "fleet-a", GATEWAY_REDIS_PASSWORD: "p@ss:w/rd#1", GATEWAY_DATABASE_PASSWORD: "db-pass-1" });
    for (const service of SERVICES) {
      const db = new URL(got[service]!.DATABASE_URL);
      expect({ service, user: db.username, where: `${db.host}${db.pathname}` }).toEqual({ service, user: DEFAULT_SERVICE_ROLES[service], where: "127.0.0.1:5432/svc_other_checkout" });
      const redis = new URL(got[service]!.REDIS_URL);
      expect({ service, user: decodeURIComponent(redis.username), where: `${redis.host}${redis.pathname}` }).toEqual({ service, user: redisUserName("fleet-a", service), where: "127.0.0.1:6380/2" });
    }
    // The operator's credentials of REDIS_URL are replaced, never passed on; a password with URL characters survives.
    expect(decodeURIComponent(new URL(got.gateway!.REDIS_URL).password)).toBe("p@ss:w/rd#1");
    expect(new URL(got.gateway!.DATABASE_URL).password).toBe("db-pass-1");
    expect(JSON.stringify(got)).not.toContain("op-pass");
  });
});

describe("the admin CLI in a new shell", () => {
  /** `npm run admin` from the checkout at `dir` (whose .env.local an older `DATABASE_URL=… npm run up` wrote). */
  function admin(vars: Record<string, string>, ...args: string[]) {
    writeFileSync(path.join(dir, ".env.local"), `KEY_HASH_SECRET=${env.keyHashSecret}\nDATABASE_URL=${OTHER_DB}\n`);
    return spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "", ...vars }, encoding: "utf8", timeout: 20_000 });
  }

  it("without DATABASE_URL uses the documented default, not a URL left in .env.local, and says so", () => {
    const res = admin({}, "ledger", "reconcile", "--account", "acct_doesnotexist000");
    expect(res.stderr).toContain("DATABASE_URL is not set: using the default database 127.0.0.1:5432/svc_validate (set DATABASE_URL to use another)");
    expect(res.stderr).not.toContain("svc_other_checkout");
    expect(res.stderr).not.toContain("up-Secret-4411");
    expect(res.status).not.toBe(0); // the account does not exist (or neither does the default database here)
  });

  it("with DATABASE_URL writes to that database, quietly, with the secret from .env.local", async () => {
    const res = admin({ DATABASE_URL: env.databaseUrl }, "account", "create", "--name", "Dot Env Ltd", "--balance", "1");
    expect(res.stderr).toBe("");
    expect(res.status).toBe(0);
    const id = (JSON.parse(res.stdout) as { id: string }).id;
    const store = createStore({ databaseUrl: env.databaseUrl });
    try {
      const { rows } = await store.pool.query<{ name: string }>("SELECT name FROM accounts WHERE id = $1", [id]);
      expect(rows[0]?.name).toBe("Dot Env Ltd");
    } finally {
      await store.close();
    }
  });
});
