import { readFileSync } from "node:fs";
import path from "node:path";
import { buildOpenApi } from "@svc/contract";
import { renderTestModeMarkdown } from "@svc/domain";

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
});
