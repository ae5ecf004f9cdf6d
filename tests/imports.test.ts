import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * The import graph's rules (docs/architecture.md, "Layers"), checked by
 * scripts/check-imports.mjs: no cycle inside a package or service, imports only go
 * down, services never import each other, SQL only in packages/store, queue job ids
 * only in packages/queues. Its KNOWN list is a ratchet: the repository passes only
 * when it has exactly the listed violations, so a fix must shrink the list.
 */
const ROOT = path.resolve(__dirname, "..");
const SCRIPT = path.join(ROOT, "scripts", "check-imports.mjs");

function check(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

type Violation = { kind: string; file: string; to?: string; count: number };
type Report = { violations: Violation[]; unexpected: Violation[]; stale: Violation[]; problems: unknown[] };
const brief = (v: Violation) => [v.kind, v.file, v.to ?? "", v.count].join(" ");

describe("import graph", () => {
  it("has no violation beyond the known list, and every listed one still occurs", () => {
    const run = check();
    if (run.status !== 0) throw new Error(`scripts/check-imports.mjs failed:\n${run.stderr}${run.stdout}`);
    expect(run.stdout).toMatch(/nothing new/);
  });

  describe("on a tree with one of each violation", () => {
    let root: string;
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    };

    beforeAll(() => {
      root = mkdtempSync(path.join(tmpdir(), "check-imports-"));
      for (const unit of ["packages/domain", "packages/store", "packages/queues", "packages/flows", "packages/sdk", "packages/widgets", "services/gateway", "services/check-worker"]) {
        write(`${unit}/package.json`, JSON.stringify({ name: `@svc/${path.basename(unit)}` }));
      }
      // a cycle, and an import up a floor
      write("packages/domain/src/a.ts", 'import { b } from "./b";\nexport const a = () => b;\n');
      write("packages/domain/src/b.ts", 'import type { a } from "./a.js";\nexport const b = 1;\nexport type A = typeof a;\n');
      write("packages/domain/src/up.ts", 'import { pool } from "@svc/store";\nexport const p = pool;\n');
      // the owners may hold SQL and job ids
      write("packages/store/src/index.ts", 'export const pool = { query: (s: string) => s };\nexport const q = `SELECT id FROM jobs WHERE id = $1`;\n');
      write("packages/queues/src/index.ts", "export const chunkId = (job: string, n: number) => `chunk-${job}-${n}`;\n");
      // the server side never imports a client, a client only the contract
      write("packages/flows/src/client.ts", 'export * from "@svc/sdk";\n');
      write("packages/sdk/src/index.ts", 'export { pool } from "@svc/store";\n');
      // a package LAYERS does not know
      write("packages/widgets/src/index.ts", "export const w = 1;\n");
      // a service importing another, SQL and a job id in a service; comments and tests do not count
      write(
        "services/gateway/src/main.ts",
        [
          "#!/usr/bin/env node",
          'import { pool } from "@svc/store";',
          "// SELECT id FROM jobs: prose in a comment is no SQL",
          'const worker = () => import("@svc/check-worker");',
          "export async function run(id: string) {",
          '  await pool.query("LISTEN things");',
          "  const sql = `UPDATE jobs SET x = 1 WHERE id = ${id}`;",
          '  return { sql, worker, jobId: `run-${id}`, other: "settle-" + id, retry: { jobId: `${id}-a1` }, fine: `chunky-${id}`, kept: { jobId: id } };',
          "}",
          "",
        ].join("\n"),
      );
      write("services/gateway/src/main.test.ts", 'import "@svc/check-worker";\nexport const q = `SELECT 1 FROM jobs`;\n');
      write("services/check-worker/src/main.ts", "export const main = () => 1;\n");
    });

    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it("finds each kind, and nothing else", () => {
      const run = check("--root", root, "--known", "none", "--json");
      expect(run.status).toBe(1);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.violations.map(brief).sort()).toEqual(
        [
          "cycle packages/domain/src/a.ts  1",
          "cycle packages/domain/src/b.ts  1",
          "layer packages/domain/src/up.ts store 1",
          "layer packages/flows/src/client.ts sdk 1",
          "layer packages/sdk/src/index.ts store 1",
          "layer packages/widgets widgets 1",
          "service-import services/gateway/src/main.ts check-worker 1",
          "sql services/gateway/src/main.ts  2",
          "job-id services/gateway/src/main.ts  3",
        ].sort(),
      );
    });

    it("is a ratchet: fails on a violation not listed, and on a listed one that no longer occurs", () => {
      const all = (JSON.parse(check("--root", root, "--known", "none", "--json").stdout) as Report).violations;
      const listed = (violations: Violation[]) => violations.map(({ kind, file, to, count }) => ({ kind, file, to, count, issue: 21 }));
      const known = path.join(root, "known.json");

      writeFileSync(known, JSON.stringify(listed(all)));
      expect(check("--root", root, "--known", known).status).toBe(0);

      const sql = all.find((v) => v.kind === "sql") as Violation;
      const rest = all.filter((v) => v !== sql);
      writeFileSync(known, JSON.stringify([...listed(rest), { ...listed([sql])[0], count: 1 }, { kind: "cycle", file: "packages/domain/src/gone.ts", count: 1, issue: 21 }]));
      const run = check("--root", root, "--known", known);
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/1 violation\(s\) not in the known list[\s\S]*sql\s+services\/gateway\/src\/main\.ts:6,7\s+SQL text outside packages\/store: LISTEN things \(\+1 more\) \(occurs 2 times, 1 listed\)/);
      expect(run.stderr).toMatch(/1 known violation\(s\) fixed or reduced[\s\S]*cycle\s+packages\/domain\/src\/gone\.ts\s+no longer occurs: delete its entry/);

      writeFileSync(known, JSON.stringify([...listed(all.filter((v) => v !== sql)), { ...listed([sql])[0], count: 3 }]));
      const lowered = check("--root", root, "--known", known, "--json");
      expect(lowered.status).toBe(1);
      expect((JSON.parse(lowered.stdout) as Report).stale.map(brief)).toEqual(["sql services/gateway/src/main.ts  3"]);
    });
  });
});
