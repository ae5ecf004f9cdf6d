import { spawnSync } from "node:child_process";
import path from "node:path";
import { parseApiKey } from "@svc/domain";
import { reconcileAccount } from "@svc/store";
import { bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

/** Runs the built CLI as an operator would (`npm run admin -- …` runs this file). */
function admin(...args: string[]) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    cwd: "/", // no .env to pick up: configuration comes from the environment only
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, json: () => JSON.parse(res.stdout) as Record<string, unknown> };
}

function createAccount(balance = "25"): string {
  const res = admin("account", "create", "--name", "Acme Corp", "--balance", balance);
  expect(res.status).toBe(0);
  return res.json().id as string;
}

describe("npm run admin", () => {
  it("creates an account with an opening balance posted to the ledger, printing one JSON object", async () => {
    const res = admin("account", "create", "--name", "Acme Corp", "--balance", "12.50");
    expect(res.status).toBe(0);
    expect(res.stderr).toBe("");
    const out = res.json();
    expect(out).toMatchObject({ object: "account", name: "Acme Corp", balance: { amount: "12.50", currency: "USD" } });
    expect(res.stdout.trim().startsWith("{") && res.stdout.trim().endsWith("}")).toBe(true);
    const rec = await reconcileAccount(gw.store.pool, out.id as string);
    expect(rec).toMatchObject({ ledgerBalanceMicros: 12_500_000n, cachedBalanceMicros: 12_500_000n, balanced: true });
  });

  it("creates keys whose plaintext is shown once and works against the gateway", async () => {
    const account = createAccount();
    const res = admin("key", "create", "--account", account, "--mode", "test");
    expect(res.status).toBe(0);
    const out = res.json();
    expect(out).toMatchObject({ object: "api_key", account_id: account, mode: "test", allow_ips: [], daily_spend_cap: null, expires_at: null });
    expect(out.scopes).toEqual(["lookup:write", "jobs:write", "jobs:read", "jobs:read_all", "account:read"]);
    expect(parseApiKey(out.key as string)).toEqual({ mode: "test", looksLikeSandbox: false });
    const lookup = await gw.http().post("/v1/lookup").set(bearer(out.key as string)).send({ numbers: ["+12025550100"], checks: ["spam"] });
    expect(lookup.status).toBe(200);
    const { rows } = await gw.store.pool.query(`SELECT hint FROM api_keys WHERE id = $1`, [out.id]);
    expect(rows[0].hint).toBe(`svc_test_…${(out.key as string).slice(-4)}`);
  });

  it("accepts scopes, allowlists, spend caps and expiry", () => {
    const account = createAccount();
    const res = admin(
      "key", "create", "--account", account, "--mode", "agent", "--scopes", "lookup:write,account:read",
      "--allow-ip", "10.0.0.0/8, 2001:db8::1", "--daily-spend-cap", "5", "--expires-at", "2099-01-31T00:00:00Z",
    );
    expect(res.status).toBe(0);
    expect(res.json()).toMatchObject({
      mode: "agent",
      scopes: ["lookup:write", "account:read"],
      allow_ips: ["10.0.0.0/8", "2001:db8::1/128"],
      daily_spend_cap: { amount: "5.00", currency: "USD" },
      expires_at: "2099-01-31T00:00:00.000Z",
    });
    expect((res.json().key as string).startsWith("svc_agent_")).toBe(true);
  });

  it("revokes a key: the next request with it gets 401", async () => {
    const account = createAccount();
    const key = admin("key", "create", "--account", account, "--mode", "live").json();
    const revoked = admin("key", "revoke", "--id", key.id as string);
    expect(revoked.status).toBe(0);
    expect(revoked.json()).toMatchObject({ object: "api_key", id: key.id, revoked: true });
    const res = await gw.http().get("/v1/services").set(bearer(key.key as string));
    expect(res.status).toBe(401);
  });

  it.each([
    [["account", "create", "--name", "X"], "--balance is required"],
    [["account", "create", "--name", "X", "--balance", "-5"], "--balance must be"],
    [["account", "create", "--name", "X", "--balance", "1.1234567"], "--balance must be"],
    [["key", "create", "--account", "acct_missing", "--mode", "test"], "no account"],
    [["key", "create", "--mode", "test"], "--account is required"],
    [["key", "create", "--account", "A", "--mode", "gold"], "--mode must be"],
    [["key", "create", "--account", "A", "--mode", "agent", "--daily-spend-cap", "5"], "explicit --scopes"],
    [["key", "create", "--account", "A", "--mode", "agent", "--scopes", "lookup:write"], "--daily-spend-cap"],
    [["key", "create", "--account", "A", "--mode", "test", "--scopes", "lookup:write,god:mode"], 'unknown scope "god:mode"'],
    [["key", "create", "--account", "A", "--mode", "test", "--allow-ip", "10/8"], "--allow-ip entry"],
    [["key", "create", "--account", "A", "--mode", "test", "--expires-at", "yesterday"], "--expires-at must be an ISO 8601"],
    [["key", "create", "--account", "A", "--mode", "test", "--expires-at", "2001-01-01T00:00:00Z"], "in the future"],
    [["key", "create", "--account", "A", "--mode", "test", "--colour", "red"], "colour"],
    [["key", "revoke", "--id", "key_nope"], "no key"],
    [["key", "fly"], "unknown command"],
    [[], "usage"],
  ])("refuses bad input %j with a clear message and a non-zero exit", (args, message) => {
    const res = admin(...(args as string[]));
    expect(res.status).not.toBe(0);
    expect(res.stdout).toBe("");
    expect(res.stderr).toContain(message);
  });

  it("tops up and adjusts balances with a reason kept in the ledger, never below zero", async () => {
    const account = createAccount("10");
    expect(admin("balance", "topup", "--account", account, "--amount", "2.5", "--reason", "wire 7", "--reference", "wire-7").json()).toMatchObject({ applied: true, balance: { amount: "12.50" } });
    // Run again (the first run timed out, say): the same reference changes nothing.
    expect(admin("balance", "topup", "--account", account, "--amount", "2.5", "--reason", "wire 7", "--reference", "wire-7").json()).toMatchObject({ applied: false, balance: { amount: "12.50" } });
    // A re-run with another amount reports what was posted the first time.
    expect(admin("balance", "topup", "--account", account, "--amount", "3", "--reason", "wire 7", "--reference", "wire-7").json()).toMatchObject({ applied: false, amount: { amount: "2.50" } });
    expect(admin("balance", "adjust", "--account", account, "--amount", "-0.50", "--reason", "goodwill reversal").json()).toMatchObject({ amount: { amount: "-0.50" }, balance: { amount: "12.00" } });
    const refused = admin("balance", "adjust", "--account", account, "--amount", "-100", "--reason", "oops");
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("below zero");
    expect(admin("balance", "topup", "--account", account, "--amount", "-1", "--reason", "x").stderr).toContain("positive amount");
    const { rows } = await gw.store.pool.query(`SELECT kind, reason FROM ledger_transactions WHERE account_id = $1 ORDER BY created_at`, [account]);
    expect(rows).toEqual([
      { kind: "topup", reason: "opening balance" },
      { kind: "topup", reason: "wire 7" },
      { kind: "adjustment", reason: "goodwill reversal" },
    ]);
    expect(admin("ledger", "reconcile", "--account", account).json()).toMatchObject({ balanced: true, balance: { amount: "12.00" } });
  });

  it("sets caps, threshold, retention and switches on an account", () => {
    const account = createAccount();
    const out = admin("account", "set", "--account", account, "--daily-identifiers-cap", "5000", "--daily-spend-cap", "25", "--low-balance-threshold", "5", "--retention-days", "7", "--realtime", "off");
    expect(out.json()).toMatchObject({ daily_identifiers_cap: 5000, daily_spend_cap: { amount: "25.00" }, low_balance_threshold: { amount: "5.00" }, retention_days: 7, realtime_enabled: false });
    expect(admin("account", "set", "--account", account, "--daily-spend-cap", "none").json()).toMatchObject({ daily_spend_cap: null, daily_identifiers_cap: 5000 });
    expect(admin("account", "set", "--account", account).stderr).toContain("nothing to change");
    expect(admin("account", "set", "--account", account, "--retention-days", "0").stderr).toContain("--retention-days must be");
    expect(admin("account", "set", "--account", account, "--realtime", "maybe").stderr).toContain("on or off");
  });

  it("sets prices, for everyone or per account, and switches checks per account", async () => {
    const account = createAccount();
    const key = admin("key", "create", "--account", account, "--mode", "test").json().key as string;
    expect(admin("price", "set", "--check", "spam", "--account", account, "--amount", "0.0015").json()).toMatchObject({ check: "number.spam", live: { amount: "0.0015" }, override: true });
    expect(admin("check", "enable", "--account", account, "--check", "hlr").json()).toMatchObject({ check: "number.hlr", enabled: true });
    const catalog = (await gw.http().get("/v1/services").set(bearer(key))).body.data;
    expect(catalog.find((s: { code: string }) => s.code === "number.spam").prices.live.amount).toBe("0.0015");
    expect(catalog.map((s: { code: string }) => s.code)).toContain("number.hlr");
    expect(admin("price", "set", "--check", "spam", "--account", account, "--amount", "default").json()).toMatchObject({ live: null, override: false });
    expect(admin("price", "set", "--check", "telepathy", "--amount", "1").stderr).toContain('unknown check "telepathy"');
    expect(admin("price", "set", "--check", "carrier", "--amount", "lots").stderr).toContain("--amount must be");
    expect(admin("check", "disable", "--account", account, "--check", "carrier").json()).toMatchObject({ enabled: false });
  });

  it("refuses to start without the server secret", () => {
    const res = spawnSync(process.execPath, [CLI, "account", "create", "--name", "X", "--balance", "1"], {
      cwd: "/",
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl },
      encoding: "utf8",
    });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain("KEY_HASH_SECRET is required");
  });
});
