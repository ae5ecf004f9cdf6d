import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * The package as a user gets it: `npm pack` of @svc/mcp (and of the SDK it needs),
 * installed into an empty project; the installed `svc-mcp` binary serves a real
 * session. Nothing private is needed at install or at run time.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const npm = (args: string[], cwd: string) =>
  promisify(execFile)(process.platform === "win32" ? "npm.cmd" : "npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_loglevel: "error" } }).then((r) => r.stdout);

let consumer: string;
let packed: { name: string; version: string; files: { path: string }[] };
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
  const out = mkdtempSync(path.join(tmpdir(), "mcp-pack-"));
  [packed] = JSON.parse(await npm(["pack", "--json", "--pack-destination", out], path.join(ROOT, "packages", "mcp")));
  await npm(["pack", "--json", "--pack-destination", out], path.join(ROOT, "packages", "sdk"));
  consumer = mkdtempSync(path.join(tmpdir(), "mcp-consumer-"));
  writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  const tarballs = readdirSync(out).filter((f) => f.endsWith(".tgz")).map((f) => path.join(out, f));
  await npm(["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs], consumer);
}, 180_000);
afterAll(async () => gw?.close());

describe("the published package", () => {
  it("ships the compiled server, its declarations, README, CHANGELOG and LICENSE; no sources, no build state", () => {
    const files = packed.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(["package.json", "README.md", "CHANGELOG.md", "LICENSE", "dist/cli.js", "dist/index.js", "dist/index.d.ts", "dist/server.js", "dist/confirm.js"]));
    expect(files.filter((f) => !/^(dist\/[\w-]+\.(js|d\.ts)|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f))).toEqual([]);
    expect(packed.version).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("depends only on public packages and the publishable SDK", () => {
    const pkg = JSON.parse(readFileSync(path.join(consumer, "node_modules", "@svc", "mcp", "package.json"), "utf8"));
    expect(pkg.private).toBeUndefined();
    expect(Object.keys(pkg.dependencies).sort()).toEqual(["@modelcontextprotocol/sdk", "@svc/sdk", "zod"]);
    expect(readdirSync(path.join(consumer, "node_modules", "@svc")).sort()).toEqual(["mcp", "sdk"]);
    for (const f of readdirSync(path.join(consumer, "node_modules", "@svc", "mcp", "dist")).filter((n) => n.endsWith(".js"))) {
      const text = readFileSync(path.join(consumer, "node_modules", "@svc", "mcp", "dist", f), "utf8");
      expect([f, /from ["']@svc\/(?!sdk["'])/.test(text)]).toEqual([f, false]);
    }
  });

  it("installs the svc-mcp binary, which serves a session over stdio", async () => {
    const bin = path.join(consumer, "node_modules", ".bin", "svc-mcp");
    expect(execFileSync(bin, ["--version"], { encoding: "utf8" }).trim()).toBe(packed.version);
    const client = new Client({ name: "pack-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({ command: bin, env: { PATH: process.env.PATH ?? "", SVC_API_KEY: "svc_test_publicSandboxDemoKey2026v1AbCd4QUfHJ", SVC_BASE_URL: gw.url }, cwd: consumer, stderr: "pipe" }),
    );
    expect((await client.listTools()).tools).toHaveLength(8);
    const r = (await client.callTool({ name: "lookup", arguments: { numbers: ["+12025550100"], checks: ["spam"] } })) as CallToolResult;
    expect(r.structuredContent).toMatchObject({ lookup: { status: "completed" } });
    await client.close();
  });
});
