import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { parseApiKey } from "@svc/domain";
import { masked } from "../support/examples";
import { startTestGateway, type TestGateway } from "../support/gateway";

const ROOT = path.resolve(__dirname, "..", "..");
const README = readFileSync(path.join(ROOT, "README.md"), "utf8");
const run = promisify(execFile);

/** The text of a `## ` or `### ` section, up to the next heading of the same or a higher level. */
function section(title: string): string {
  const heading = new RegExp(`^(#{2,3}) ${title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m").exec(README);
  if (!heading) throw new Error(`README has no section "${title}"`);
  const rest = README.slice(heading.index + heading[0].length);
  const next = new RegExp(`^#{2,${heading[1]!.length}} `, "m").exec(rest);
  return next ? rest.slice(0, next.index) : rest;
}

/** The fenced blocks of a language in a piece of Markdown. */
const blocks = (markdown: string, lang: string): string[] => [...markdown.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
}, 60_000);
afterAll(async () => gw?.close());

describe("README: the consumer's first call", () => {
  it("comes first, before the set-up commands, the operators' and the contributors' sections", () => {
    const order = ["## Your first call", "## Quick start", "## Running the fleet (operators)", "## Configuration", "## The fleet (for contributors)", "## The test suite"].map((h) => README.indexOf(`\n${h}\n`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("answers, pasted as it is, exactly what the README shows (ids and times aside)", async () => {
    const [command] = blocks(section("Your first call"), "sh");
    const [shown] = blocks(section("Your first call"), "json");
    expect(command).toMatch(/^curl /);
    const { stdout } = await run("sh", ["-c", command!.replaceAll("http://localhost:8080", gw.url)], { timeout: 20_000 });
    expect(masked(JSON.parse(stdout))).toEqual(masked(JSON.parse(shown!)));
  });
});

describe("README: commands are safe to paste", () => {
  it("no shell block holds a placeholder or a list of alternatives that a shell would run as a pipe", () => {
    for (const block of blocks(README, "sh")) {
      expect(block).not.toMatch(/…|<[a-z_ -]+>/i);
      expect(block).not.toMatch(/\w\|\w/);
    }
  });

  it("the operator's keys block makes an account and prints a test key for it", async () => {
    const [keys] = blocks(section("Keys"), "sh");
    const { stdout } = await run("sh", ["-ec", keys!], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
      timeout: 60_000,
    });
    const created = JSON.parse(stdout) as { key: string; account: string; mode: string };
    expect(created.mode).toBe("test");
    expect(parseApiKey(created.key)?.mode).toBe("test");
    const res = await gw.http().get("/v1/account").set("Authorization", `Bearer ${created.key}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Acme", balance: { amount: "25.00", currency: "USD" } });
  }, 90_000);
});
