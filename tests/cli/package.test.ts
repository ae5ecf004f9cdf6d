import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * The package as a user gets it: `npm pack` of the built CLI, installed into an
 * empty project. One bundled file behind the bin launcher, no dependency to fetch,
 * no private package named; the installed `svc` runs against the gateway.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const CLI = path.join(ROOT, "packages", "cli");
const npm = (args: string[], cwd: string) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_loglevel: "error" } });

let consumer: string;
let packed: { name: string; version: string; files: { path: string }[] };
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
  const out = mkdtempSync(path.join(tmpdir(), "cli-pack-"));
  [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", out], CLI));
  consumer = mkdtempSync(path.join(tmpdir(), "cli-consumer-"));
  writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  const tarball = path.join(out, readdirSync(out).find((f) => f.endsWith(".tgz")) as string);
  npm(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], consumer);
}, 120_000);
afterAll(async () => gw?.close());

describe("the published package", () => {
  it("ships the launcher, the bundle, README, CHANGELOG and LICENSE; installs nothing else (offline)", () => {
    expect(packed.files.map((f) => f.path).sort()).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "bin/svc.js", "dist/svc.js", "package.json"]);
    expect(readdirSync(path.join(consumer, "node_modules")).filter((d) => !d.startsWith("."))).toEqual(["@svc"]);
    expect(readdirSync(path.join(consumer, "node_modules", "@svc"))).toEqual(["cli"]);
  });

  it("the installed svc runs: --version, and a lookup against the gateway", async () => {
    const bin = path.join(consumer, "node_modules", ".bin", "svc");
    expect(execFileSync(bin, ["--version"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" } }).trim()).toBe(packed.version);
    // Asynchronously: the gateway it talks to runs in this process.
    const { stdout: out } = await promisify(execFile)(bin, ["--json", "lookup", "+12025550101"], { encoding: "utf8", env: { PATH: process.env.PATH ?? "", SVC_API_KEY: "svc_test_publicSandboxDemoKey2026v1AbCd4QUfHJ", SVC_BASE_URL: gw.url } });
    expect(JSON.parse(out)).toMatchObject({ object: "lookup", status: "completed", results: [{ e164: "+12025550101" }] });
  });
});
