import { execFile } from "node:child_process";
import path from "node:path";
import { createStore, type Store } from "@svc/store";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { FakeDnsServer } from "../../packages/sources/src/email/testing/fake-dns";
import { createTestEnv, type TestEnv } from "../support/env";

/**
 * `npm run admin -- doctor`: which checks a fleet configured like this process
 * answers live, against a real database and a real vendor simulator socket.
 */
const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
const FIXTURES = path.resolve(__dirname, "..", "fixtures");

type Report = {
  object: string;
  live_ready: boolean;
  unavailable: string[];
  checks: Array<{
    check: string;
    status: string;
    live_price: { amount: string } | null;
    offered_to: string;
    missing: string[];
    notes: string[];
    routes?: Array<{ name: string; url: string; key_set: boolean; probe: { outcome: string; status: number | null } | null }>;
    imports?: Array<{ source: string; age_days: number }>;
  }>;
};

let env: TestEnv;
let store: Store;
let sim: Simulator;
let dns: FakeDnsServer;
let dnsServer: string;
beforeAll(async () => {
  env = await createTestEnv();
  store = createStore({ databaseUrl: env.databaseUrl, poolSize: 2, applicationName: "doctor-test" });
  sim = await startSimulator({ apiKey: "doctor-sim-key" });
  dns = new FakeDnsServer({ "mail.svc.test": { a: ["192.0.2.25"] } });
  dnsServer = await dns.start();
});
afterAll(async () => {
  await sim.close();
  await dns.stop();
  await store.close();
});

/**
 * Runs the built CLI as an operator would, asynchronously: the vendor simulator and
 * the DNS server answer from this process's event loop, which spawnSync would block.
 */
function admin(settings: Record<string, string>, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; json: () => Report }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: "/", env: { PATH: process.env.PATH ?? "", DATABASE_URL: env.databaseUrl, KEY_HASH_SECRET: env.keyHashSecret, ...settings }, encoding: "utf8", timeout: 30_000 },
      (err, stdout, stderr) => {
        const status = err ? (typeof err.code === "number" ? err.code : null) : 0;
        resolve({ status, stdout, stderr, json: () => JSON.parse(stdout) as Report });
      },
    );
  });
}
const doctor = (settings: Record<string, string>, ...args: string[]) => admin(settings, "doctor", ...args);
const check = (report: Report, code: string) => report.checks.find((c) => c.check === code)!;

const SIMULATOR = () => ({ VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "doctor-sim-key", VENDOR_TIMEOUT_MS: "2000" });
const EMAIL = () => ({ SMTP_HELO_NAME: "mail.svc.test", DNS_SERVERS: dnsServer, DNS_TIMEOUT_MS: "1000" });

describe("npm run admin -- doctor", () => {
  it("without VENDOR_PRIMARY_URL or SMTP_HELO_NAME: those checks are unavailable, says what to set, exits 3", async () => {
    const res = await doctor({});
    expect(res.stderr).toBe("");
    expect(res.status).toBe(3);
    const report = res.json();
    expect(report).toMatchObject({ object: "doctor", live_ready: false });
    expect(report.unavailable.sort()).toEqual(["email", "number.hlr", "signal.registered", "whatsapp"]);
    for (const code of ["whatsapp", "signal.registered", "number.hlr"]) {
      expect(check(report, code)).toMatchObject({ status: "unavailable", missing: [expect.stringContaining("set VENDOR_PRIMARY_URL and VENDOR_PRIMARY_KEY")] });
      expect(check(report, code).missing[0]).toContain("503 temporarily_unavailable");
    }
    expect(check(report, "email")).toMatchObject({ status: "unavailable", missing: [expect.stringContaining("SMTP_HELO_NAME is not set")] });
    // Every check is reported, with its live price from the store.
    expect(report.checks.map((c) => c.check).sort()).toEqual(["carrier", "email", "number.hlr", "number.spam", "signal.registered", "whatsapp"]);
    expect(check(report, "whatsapp").live_price).toEqual({ amount: "0.004", currency: "USD" });
    expect(check(report, "number.hlr").offered_to).toMatch(/^only accounts it is switched on for \(coming_soon; 0 accounts\)$/);
  });

  it("with the vendor simulator: whatsapp, signal.registered and number.hlr answer; the probe looks nothing up", async () => {
    const before = { ...sim.stats };
    const res = await doctor({ ...SIMULATOR() });
    const report = res.json();
    for (const code of ["whatsapp", "signal.registered", "number.hlr"]) {
      expect(check(report, code)).toMatchObject({
        status: "ready",
        missing: [],
        routes: [{ name: "vendor-primary", url: sim.url, key_set: true, probe: { outcome: "reachable", status: 400 } }],
      });
    }
    // One probe per check's route set, each an empty batch: the vendor was reached, nothing answered or charged.
    expect(sim.stats.requests).toBeGreaterThan(before.requests);
    expect(sim.stats.answered).toBe(before.answered);
    // The key never appears in the output.
    expect(res.stdout).not.toContain("doctor-sim-key");
    // e-mail is still missing: exit 3.
    expect(res.status).toBe(3);
    expect(report.unavailable).toEqual(["email"]);
  });

  it("a vendor that refuses the key, is down or is not there: unavailable, and why", async () => {
    const wrongKey = (await doctor({ ...SIMULATOR(), VENDOR_PRIMARY_KEY: "not-the-key" })).json();
    expect(check(wrongKey, "whatsapp")).toMatchObject({ status: "unavailable", routes: [{ probe: { outcome: "key_refused", status: 401 } }] });
    expect(check(wrongKey, "whatsapp").notes).toContainEqual(expect.stringContaining("refused the key"));

    // A route nothing listens on any more.
    const closed = await startSimulator({ apiKey: "k" });
    const url = closed.url;
    await closed.close();
    const down = (await doctor({ VENDOR_PRIMARY_URL: url, VENDOR_PRIMARY_KEY: "k", VENDOR_SECONDARY_URL: sim.url, VENDOR_SECONDARY_KEY: "doctor-sim-key" })).json();
    // One route of two fails: the check still answers, without failover.
    expect(check(down, "whatsapp")).toMatchObject({ status: "limited", missing: [expect.stringContaining("vendor-primary failed the probe")] });
    expect(check(down, "whatsapp").routes!.map((r) => r.probe?.outcome)).toEqual(["unreachable", "reachable"]);
    const none = (await doctor({ VENDOR_PRIMARY_URL: url, VENDOR_PRIMARY_KEY: "k" })).json();
    expect(check(none, "whatsapp")).toMatchObject({ status: "unavailable", missing: [expect.stringContaining("every vendor route failed the probe")] });
  });

  it("number.spam without a spam-report import says every number answers no_reports; an import makes it ready; an old one is stale", async () => {
    const empty = (await doctor({ ...SIMULATOR(), ...EMAIL() })).json();
    expect(check(empty, "number.spam")).toMatchObject({ status: "limited", imports: [], missing: [expect.stringContaining("no spam reports imported: every live number.spam answers risk_level no_reports")] });
    // Limited is not unavailable: the check answers.
    expect(empty.unavailable).toEqual([]);

    const imported = await admin({}, "spam", "import", "--source", "ftc", "--file", path.join(FIXTURES, "spam", "ftc-dnc.csv"));
    expect(imported.status).toBe(0);
    const fresh = (await doctor({ ...SIMULATOR(), ...EMAIL() })).json();
    expect(check(fresh, "number.spam")).toMatchObject({ status: "ready", missing: [], imports: [{ source: "ftc_dnc", age_days: 0 }] });
    expect(check(fresh, "number.spam").notes).toContainEqual(expect.stringMatching(/^never imported: fcc_complaints, regulator_actions, community, unassigned_offers$/));

    await store.pool.query(`UPDATE spam_imports SET created_at = created_at - interval '40 days'`);
    const stale = (await doctor({ ...SIMULATOR(), ...EMAIL() })).json();
    expect(check(stale, "number.spam")).toMatchObject({ status: "limited", missing: [expect.stringContaining("the newest spam-report import is 40 days old")] });
    await store.pool.query(`UPDATE spam_imports SET created_at = created_at + interval '40 days'`);
  });

  it("email answers with SMTP_HELO_NAME set, and says when the name does not resolve", async () => {
    const ok = (await doctor({ ...SIMULATOR(), ...EMAIL() })).json();
    expect(check(ok, "email")).toMatchObject({ status: "ready", missing: [] });
    expect(check(ok, "email").notes).toContainEqual(expect.stringContaining("mail.svc.test resolves to 192.0.2.25"));
    const unknown = (await doctor({ ...SIMULATOR(), ...EMAIL(), SMTP_HELO_NAME: "nowhere.svc.test" })).json();
    expect(check(unknown, "email")).toMatchObject({ status: "limited", missing: [expect.stringContaining("does not resolve through the configured resolvers (nxdomain)")] });
  });

  it("carrier: without number-block imports it answers from prefix data only; with one it is ready", async () => {
    const before = (await doctor({ ...SIMULATOR(), ...EMAIL() })).json();
    expect(check(before, "carrier")).toMatchObject({ status: "limited", missing: [expect.stringContaining("no number-block allocations imported")] });
    const imported = await admin({}, "carrier", "import", "--source", "ofcom", "--file", path.join(FIXTURES, "carriers", "ofcom-S1.csv"));
    expect(imported.status).toBe(0);
    const after = await doctor({ ...SIMULATOR(), ...EMAIL() });
    expect(check(after.json(), "carrier")).toMatchObject({ status: "ready", imports: [{ source: "ofcom", age_days: 0 }] });
    // Everything answers now: exit 0.
    expect(after.json()).toMatchObject({ live_ready: true, unavailable: [] });
    expect(after.status).toBe(0);
  });

  it("prints a table with --format table, validates settings like the check-worker, and judges one account with --account", async () => {
    const table = await doctor({}, "--no-probe", "--format", "table");
    expect(table.status).toBe(3);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^CHECK\s+STATUS\s+LIVE PRICE\s+WHAT IS MISSING$/);
    expect(lines.find((l) => l.startsWith("whatsapp "))).toMatch(/^whatsapp\s+unavailable\s+\$0\.004\s+no vendor route: set VENDOR_PRIMARY_URL/);

    // The check-worker's schema: a URL that is not one is refused, naming the variable.
    const bad = await doctor({ VENDOR_PRIMARY_URL: "vendor.example" });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("VENDOR_PRIMARY_URL");

    const account = await admin({}, "account", "create", "--name", "Doctor Ltd", "--balance", "5");
    const id = (JSON.parse(account.stdout) as { id: string }).id;
    expect((await admin({}, "price", "set", "--check", "whatsapp", "--account", id, "--amount", "0.003")).status).toBe(0);
    expect((await admin({}, "check", "disable", "--account", id, "--check", "carrier")).status).toBe(0);
    const judged = (await doctor({ ...SIMULATOR(), ...EMAIL() }, "--account", id)).json();
    expect(check(judged, "whatsapp")).toMatchObject({ status: "ready", live_price: { amount: "0.003" }, offered_to: `account ${id}` });
    expect(check(judged, "carrier")).toMatchObject({ status: "unavailable", missing: [expect.stringContaining(`switched off for account ${id}`)] });
    // number.hlr is coming_soon: not offered to this account until switched on.
    expect(check(judged, "number.hlr")).toMatchObject({ status: "unavailable" });
    expect((await doctor({}, "--account", "acct_missing")).stderr).toContain("no account");
    expect((await doctor({}, "--format", "xml")).stderr).toContain("--format must be json or table");
  });
});
