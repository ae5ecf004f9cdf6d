import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { svc } from "./run";

/**
 * docs/cli.md is copy-paste material: its quick start runs as written in bash
 * (`npx svc` from inside the repository, against the test gateway instead of
 * localhost:8080), its exit-code table is the one `svc --help` prints, and the
 * README links it.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const doc = readFileSync(path.join(ROOT, "docs", "cli.md"), "utf8");
const shellBlocks = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw?.close());

describe("docs/cli.md", () => {
  it("the quick start runs as written: every command exits 0, the job is downloaded", async () => {
    const quick = shellBlocks.find((b) => b.includes("npx svc lookup"));
    expect(quick).toBeDefined();
    const dir = path.join(ROOT, "node_modules", ".cache", `svc-cli-docs-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    try {
      const script = `set -euo pipefail\n${quick!.replace("http://localhost:8080", gw.url)}`;
      const res = await promisify(execFile)("bash", ["-c", script], { cwd: dir, encoding: "utf8", timeout: 90_000, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root" } });
      expect(res.stdout).toMatch(/\+12025550101\s+number\.spam\s+ok\s+yes\s+.*risk_level=high/);
      expect(res.stdout).toMatch(/^status\s+completed \(test mode\)$/m);
      expect(res.stdout).toMatch(/^balance\s+/m);
      expect(res.stdout).toMatch(/^total\s+/m);
      const csv = readFileSync(path.join(dir, "results.csv"), "utf8").trim().split("\n");
      expect(csv).toHaveLength(5);
      expect(csv[0]).toMatch(/^row_no,input_masked,e164,/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("its exit-code table is the one svc --help prints; the README links the doc", async () => {
    const table = [...doc.split(/^## Exit codes$/m)[1]!.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    const help = (await svc(["--help"])).stdout.split(/^Exit codes:$/m)[1]!;
    const printed = [...help.matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1]));
    expect(table).toEqual(printed);
    expect(table).toEqual([0, 1, 2, 3, 4, 5, 70, 130]);
    expect(readFileSync(path.join(ROOT, "README.md"), "utf8")).toContain("(docs/cli.md)");
  });
});
