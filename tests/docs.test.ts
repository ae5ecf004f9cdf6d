import { readFileSync } from "node:fs";
import path from "node:path";
import { buildOpenApi } from "@svc/contract";
import { renderTestModeMarkdown } from "@svc/domain";
import { Env as LedgerEnv } from "../services/billing-ledger/src/config";
import { CheckWorkerEnv } from "../services/check-worker/src/config";
import { GatewayEnv } from "../services/gateway/src/config";
import { DispatcherEnv } from "../services/webhook-dispatcher/src/config";

const ROOT = path.resolve(__dirname, "..");

describe("generated documentation", () => {
  it("docs/test-mode.md matches the table the service answers from (run `npm run docs`)", () => {
    expect(readFileSync(path.join(ROOT, "docs", "test-mode.md"), "utf8")).toBe(renderTestModeMarkdown());
  });

  it("docs/openapi.json matches the contract (run `npm run docs`)", () => {
    expect(JSON.parse(readFileSync(path.join(ROOT, "docs", "openapi.json"), "utf8"))).toEqual(buildOpenApi("https://api.example.com"));
  });

  it("the README shows the sandbox key and exactly two quick-start commands", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const quick = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? "";
    const commands = [...quick.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].map((m) => m[1]?.trim());
    expect(commands).toEqual(["npm run up", "npm test"]);
  });

  it("the README's configuration table names every setting a service reads", () => {
    const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
    const table = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? "";
    const documented = new Set([...table.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
    const settings = new Set([LedgerEnv, CheckWorkerEnv, GatewayEnv, DispatcherEnv].flatMap((schema) => Object.keys(schema.properties)));
    expect([...settings].filter((name) => !documented.has(name))).toEqual([]);
  });
});
