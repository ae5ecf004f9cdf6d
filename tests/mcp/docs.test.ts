import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * docs/mcp.md is copy-paste material: its script runs as written (against the test
 * gateway instead of localhost:8080), its client configuration is valid JSON that
 * starts the built server, and the README links it.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const doc = readFileSync(path.join(ROOT, "docs", "mcp.md"), "utf8");
const blocks = (lang: string) => [...doc.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1] as string);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

describe("docs/mcp.md", () => {
  it("the try-mcp.mjs script runs as written and looks a number up through the server", async () => {
    const script = blocks("js").find((b) => b.includes("try-mcp.mjs"));
    expect(script).toBeDefined();
    // Where `node try-mcp.mjs` from the repository root would resolve its imports.
    const dir = path.join(ROOT, "node_modules", ".cache", `svc-mcp-docs-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(path.join(dir, "try-mcp.mjs"), script!.replace("http://localhost:8080", gw.url));
      // Asynchronously: the gateway it talks to runs in this process.
      const res = await promisify(execFile)(process.execPath, [path.join(dir, "try-mcp.mjs")], { cwd: ROOT, encoding: "utf8", timeout: 30_000, env: { PATH: process.env.PATH ?? "" } });
      expect(res.stderr).not.toMatch(/Error/);
      expect(res.stdout).toContain("'create_job'");
      expect(res.stdout).toContain('"status": "completed"');
      expect(res.stdout).toContain('"risk_level": "high"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the client configuration block is valid JSON naming the built server and SVC_API_KEY", () => {
    const config = JSON.parse(blocks("json").find((b) => b.includes('"command": "node"'))!);
    const server = config.mcpServers["svc-validate"];
    expect(server.args[0]).toMatch(/\/packages\/mcp\/dist\/cli\.js$/);
    expect(Object.keys(server.env)).toEqual(["SVC_API_KEY", "SVC_BASE_URL", "SVC_MCP_CONFIRM_ABOVE"]);
    expect(JSON.parse(blocks("json").find((b) => b.includes('"type": "http"'))!).mcpServers["svc-validate"].url).toBe("http://127.0.0.1:8765/mcp");
  });

  it("shows the operator how to issue an agent key with narrow scopes and a daily spend cap, and the README links it", () => {
    expect(doc).toContain("npm run admin -- key create --account acct_… --mode agent \\\n  --scopes lookup:write,jobs:write,jobs:read,account:read --daily-spend-cap 5.00");
    expect(doc).toContain("spend_cap_reached");
    expect(doc).toContain("confirmation_required");
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8")).toContain("[`docs/mcp.md`](docs/mcp.md)");
    expect(readFileSync(path.join(ROOT, "packages", "mcp", "README.md"), "utf8")).toContain("docs/mcp.md");
  });
});
