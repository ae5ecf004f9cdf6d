import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * docs/openapi.json through the two common linters, as a newcomer's CI would run
 * them: Redocly (redocly.yaml, .redocly.lint-ignore.yaml) and Spectral
 * (.spectral.yaml). Any error or warning fails; rules that do not apply are switched
 * off in those files, each with its reason.
 */

const ROOT = path.resolve(__dirname, "..", "..");
const DOCUMENT = path.join(ROOT, "docs", "openapi.json");
const BIN = path.join(ROOT, "node_modules", ".bin");

type Problem = { rule: string; severity: string; where: string; message: string };

function run(command: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(path.join(BIN, command), args, { cwd, encoding: "utf8", timeout: 120_000, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" } });
  if (res.error) throw res.error;
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** `redocly lint` with the repository's configuration and ignore file, run from `cwd` on `file` (relative). */
function redocly(cwd: string, file: string): Problem[] {
  const res = run("redocly", ["lint", file, "--format=json", "--max-problems=1000"], cwd);
  const start = res.stdout.indexOf("{");
  if (start < 0) throw new Error(`redocly printed no JSON (exit ${res.status}): ${res.stderr}`);
  const out = JSON.parse(res.stdout.slice(start)) as { problems: Array<{ ruleId: string; severity: string; message: string; ignored?: boolean; location: Array<{ pointer?: string }> }> };
  return out.problems.filter((p) => !p.ignored).map((p) => ({ rule: p.ruleId, severity: p.severity, where: p.location[0]?.pointer ?? "", message: p.message }));
}

const SPECTRAL_SEVERITY = ["error", "warn", "info", "hint"];

/** `spectral lint` with the repository's .spectral.yaml, on `file`. */
function spectral(cwd: string, file: string): Problem[] {
  const res = run("spectral", ["lint", file, "--ruleset", path.join(ROOT, ".spectral.yaml"), "--format=json", "--fail-severity=hint", "--quiet"], cwd);
  const start = res.stdout.indexOf("[");
  if (start < 0) throw new Error(`spectral printed no JSON (exit ${res.status}): ${res.stderr}`);
  const out = JSON.parse(res.stdout.slice(start)) as Array<{ code: string; severity: number; message: string; path: string[] }>;
  return out.map((p) => ({ rule: p.code, severity: SPECTRAL_SEVERITY[p.severity] ?? String(p.severity), where: p.path.join("."), message: p.message }));
}

/** A copy of the repository's lint set-up around a changed document, in a scratch directory. */
function lintBroken(change: (doc: Record<string, any>) => void): { redocly: Problem[]; spectral: Problem[] } {
  const dir = mkdtempSync(path.join(tmpdir(), "openapi-lint-"));
  try {
    const doc = JSON.parse(readFileSync(DOCUMENT, "utf8")) as Record<string, any>;
    change(doc);
    writeFileSync(path.join(dir, "openapi.json"), JSON.stringify(doc, null, 2));
    for (const f of ["redocly.yaml", ".redocly.lint-ignore.yaml"]) writeFileSync(path.join(dir, f), readFileSync(path.join(ROOT, f), "utf8").replaceAll("docs/openapi.json:", "openapi.json:"));
    return { redocly: redocly(dir, "openapi.json"), spectral: spectral(dir, "openapi.json") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("docs/openapi.json, linted", () => {
  it("Redocly reports no error and no warning", () => {
    expect(redocly(ROOT, "docs/openapi.json")).toEqual([]);
  }, 120_000);

  it("Spectral reports no error, warning, info or hint", () => {
    expect(spectral(ROOT, "docs/openapi.json")).toEqual([]);
  }, 120_000);

  it("both do report what they should (an operation without a 4XX, an undeclared tag, an undeclared path parameter)", () => {
    const found = lintBroken((doc) => {
      doc.paths["/v1/account"].get.responses = { 200: doc.paths["/v1/account"].get.responses["200"] };
      doc.paths["/v1/limits"].get.tags = ["Not declared"];
      doc.paths["/v1/jobs/{id}"].get.parameters = doc.paths["/v1/jobs/{id}"].get.parameters.filter((p: { in: string }) => p.in !== "path");
    });
    expect(found.redocly.map((p) => `${p.rule} ${p.where}`)).toEqual(expect.arrayContaining(["operation-4xx-response #/paths/~1v1~1account/get/responses", "path-parameters-defined #/paths/~1v1~1jobs~1{id}/get/parameters"]));
    expect(found.spectral.map((p) => p.rule)).toEqual(expect.arrayContaining(["operation-tag-defined", "path-params"]));
  }, 120_000);
});
