import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { startSimulator, type Simulator } from "@svc/vendor-simulator";
import { accountWithKey, bearer } from "../support/fixtures";
import { startService, type RunningService } from "../support/fleet";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually } from "../support/live";
import { routesKey } from "@svc/sources";

const run = promisify(execFile);
const CLI = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
const FIXTURES = path.resolve(__dirname, "..", "fixtures", "carriers");

/** The operator's imports, as docs/carrier-importers.md shows them. */
async function importAll(gw: TestGateway): Promise<void> {
  const env = { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret };
  const files = { "nanpa-co": ["allutlzd.txt"], "nanpa-thousands": ["AllBlocksAugmentedReport.txt"], bnetza: ["bnetza-ortsnetze.csv", "bnetza-mobile.csv"], ofcom: ["ofcom-S1.csv"] };
  await Promise.all(
    Object.entries(files).map(([source, names]) =>
      run(process.execPath, [CLI, "carrier", "import", "--source", source, ...names.flatMap((name) => ["--file", path.join(FIXTURES, name)])], { env }),
    ),
  );
}

async function startFleet(extra: Record<string, string>): Promise<{ gw: TestGateway; sim: Simulator; worker: RunningService; ledger: RunningService; stop(): Promise<void> }> {
  const gw = await startTestGateway();
  const sim = await startSimulator();
  await importAll(gw);
  const [worker, ledger] = await Promise.all([
    startService("check-worker", gw.env, { VENDOR_PRIMARY_URL: sim.url, VENDOR_PRIMARY_KEY: "sim-key", VENDOR_TIMEOUT_MS: "1000", VENDOR_RETRIES: "0", ...extra }),
    startService("billing-ledger", gw.env, { SWEEP_INTERVAL_MS: "500" }),
  ]);
  await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "carrier")), 15_000, "carrier routes advertised");
  return {
    gw,
    sim,
    worker,
    ledger,
    async stop() {
      await Promise.all([worker.stop(), ledger.stop()]);
      await sim.close();
      await gw.close();
    },
  };
}

type Check = { service: string; status: string; registered: unknown; attributes: Record<string, unknown> | null; billed: boolean; cached: boolean };

async function lookup(gw: TestGateway, numbers: string[]): Promise<Check[]> {
  const k = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", balanceMicros: 10_000_000n });
  const res = await gw.http().post("/v1/lookup").set(bearer(k.key)).send({ numbers, checks: ["carrier"], wait: 10 });
  expect(res.status).toBe(200);
  return res.body.results.map((r: { checks: Check[] }) => r.checks[0]);
}

const allocated = (carrier: string | null, lineType: string, country: string) => ({
  service: "carrier",
  status: "ok",
  registered: null,
  attributes: { line_type: lineType, carrier, country, carrier_source: carrier === null ? null : "allocation" },
  billed: true,
  cached: false,
  checked_at: expect.any(String),
});

describe("carrier through the fleet: the block's original carrier from imported allocation data", () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  beforeAll(async () => {
    fleet = await startFleet({});
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  it("names the carrier of the longest matching block, says it is the allocation, and bills it", async () => {
    const checks = await lookup(fleet.gw, ["+13125551234", "+12125559876", "+12125550123", "+442079460123", "+4915112345678", "+493023125417"]);
    expect(checks).toEqual([
      allocated("BANDWIDTH.COM CLEC, LLC - IL", "fixed_line_or_mobile", "US"), // thousands block 312-555-1 inside the CO code of Verizon Wireless
      allocated("VERIZON NEW YORK, INC.", "fixed_line_or_mobile", "US"), // no thousands block 212-555-9: the CO code
      allocated("LEVEL 3 COMMUNICATIONS, LLC - NY", "fixed_line_or_mobile", "US"), // thousands block 212-555-0
      allocated("British Telecommunications Plc", "fixed_line", "GB"),
      allocated("Telekom Deutschland GmbH", "mobile", "DE"), // the BNetzA block, ahead of Google's prefix data
      allocated("Deutsche Telekom AG", "fixed_line", "DE"),
    ]);
  });

  it("answers a number in no stored block with its line type, no carrier, and bills it (line type is the answer)", async () => {
    const [check] = await lookup(fleet.gw, ["+13035550123"]);
    expect(check).toEqual(allocated(null, "fixed_line_or_mobile", "US"));
  });
});

describe("carrier through the fleet with porting data (CARRIER_NETWORK_LOOKUPS)", () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  beforeAll(async () => {
    fleet = await startFleet({ CARRIER_NETWORK_LOOKUPS: "true" });
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  it("advertises the vendor route ahead of the allocation data", async () => {
    const routes = JSON.parse((await fleet.gw.deps.redis.get(routesKey(fleet.gw.env.redisPrefix, "carrier"))) ?? "[]");
    expect(routes).toEqual(["vendor-primary:carrier", "offline-prefix-data"]);
  });

  it("the vendor's network wins where it names one; the allocation answers where it does not, and when the vendor is down", async () => {
    // The simulator's hlr answers +13125551000 and +13125551001 (reachable, network "Simulated Network") and not +13125551003 (unknown).
    const network = { service: "carrier", status: "ok", registered: null, attributes: { line_type: "fixed_line_or_mobile", carrier: "Simulated Network", country: "US", carrier_source: "network" }, billed: true, cached: false, checked_at: expect.any(String) };
    const before = fleet.sim.stats.requests;
    expect(await lookup(fleet.gw, ["+13125551000", "+13125551001", "+13125551003"])).toEqual([network, network, allocated("BANDWIDTH.COM CLEC, LLC - IL", "fixed_line_or_mobile", "US")]);
    expect(fleet.sim.stats.requests).toBeGreaterThan(before);

    fleet.sim.settings.outage = true;
    try {
      expect(await lookup(fleet.gw, ["+13125551007"])).toEqual([allocated("BANDWIDTH.COM CLEC, LLC - IL", "fixed_line_or_mobile", "US")]);
    } finally {
      fleet.sim.settings.outage = false;
    }
  });
});
