import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { CHROMIUM_PATH } from "./chromium";

const LIB = pathToFileURL(path.resolve(__dirname, "..", "..", "scripts", "lib.mjs")).href;

/** Runs scripts/lib.mjs's ensureChromium() in its own process, as `npm test` does. */
function ensureChromium(env: Record<string, string | undefined>) {
  const script = `import(${JSON.stringify(LIB)}).then((m) => process.stdout.write("CHROMIUM=" + m.ensureChromium()))`;
  return spawnSync(process.execPath, ["-e", script], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 20_000 });
}

describe("npm test's Chromium step (scripts/lib.mjs ensureChromium)", () => {
  it("finds the installed Chromium without installing anything", () => {
    const run = ensureChromium({ CHROMIUM_PATH: CHROMIUM_PATH });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`CHROMIUM=${CHROMIUM_PATH}`);
    expect(run.stdout + run.stderr).not.toContain("Installing Chromium");
  });

  it("stops with a message saying how to install it when it cannot: the browser tests are not skipped", () => {
    const run = ensureChromium({ CHROMIUM_PATH: "/nonexistent/chromium" });
    expect(run.status).toBe(1);
    expect(run.stdout).not.toContain("CHROMIUM=");
    expect(run.stderr).toContain("The browser tests need Chromium at /nonexistent/chromium");
    expect(run.stderr).toContain("apt-get install -y chromium");
    expect(run.stderr).toContain("not skipped");
  });
});
