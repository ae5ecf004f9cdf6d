import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * The package as a consumer gets it: `npm pack` of the built SDK, installed into
 * an empty project. It must install without any private @svc package, run as ESM
 * and CJS, and type-check a consumer that leans on its types.
 */
const ROOT = path.resolve(__dirname, "..", "..");
const SDK = path.join(ROOT, "packages", "sdk");
const npm = (args: string[], cwd: string) => execFileSync(process.platform === "win32" ? "npm.cmd" : "npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, npm_config_loglevel: "error" } });

let consumer: string;
let packed: { name: string; version: string; files: { path: string }[] };

beforeAll(() => {
  const out = mkdtempSync(path.join(tmpdir(), "sdk-pack-"));
  [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", out], SDK));
  consumer = mkdtempSync(path.join(tmpdir(), "sdk-consumer-"));
  writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  const tarball = path.join(out, readdirSync(out).find((f) => f.endsWith(".tgz")) as string);
  npm(["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], consumer);
}, 120_000);

describe("the published package", () => {
  it("ships only the bundles, one declaration file per module system, README, CHANGELOG and LICENSE", () => {
    expect(packed.files.map((f) => f.path).sort()).toEqual(
      ["CHANGELOG.md", "LICENSE", "README.md", "dist/index.cjs", "dist/index.cjs.map", "dist/index.d.cts", "dist/index.d.mts", "dist/index.d.ts", "dist/index.mjs", "dist/index.mjs.map", "package.json"].sort(),
    );
  });

  it("installs with @sinclair/typebox as its only dependency, and names no private package", () => {
    const installed = JSON.parse(readFileSync(path.join(consumer, "node_modules", "@svc", "sdk", "package.json"), "utf8"));
    expect(Object.keys(installed.dependencies)).toEqual(["@sinclair/typebox"]);
    expect(readdirSync(path.join(consumer, "node_modules")).filter((d) => !d.startsWith("."))).toEqual(["@sinclair", "@svc"]);
    expect(readdirSync(path.join(consumer, "node_modules", "@svc"))).toEqual(["sdk"]);
    for (const f of ["index.mjs", "index.cjs", "index.d.ts"]) {
      const text = readFileSync(path.join(consumer, "node_modules", "@svc", "sdk", "dist", f), "utf8");
      expect([f, /from ["']@svc\/|require\(["']@svc\/|["']ajv["']|libphonenumber/.test(text)]).toEqual([f, false]);
    }
  });

  it("loads as ESM and as CommonJS", () => {
    const esm = execFileSync(process.execPath, ["--input-type=module", "-e", "import { Client, webhooks, ERROR_CODES } from '@svc/sdk'; console.log(typeof Client, typeof webhooks.verify, Object.keys(ERROR_CODES).length > 20)"], { cwd: consumer, encoding: "utf8" });
    expect(esm.trim()).toBe("function function true");
    const cjs = execFileSync(process.execPath, ["-e", "const { Client, InvalidRequestError, APIError } = require('@svc/sdk'); console.log(typeof Client, new InvalidRequestError({ status: 400, body: null, headers: new Headers(), requestId: null, retryAfterMs: null, attempts: 1 }) instanceof APIError)"], { cwd: consumer, encoding: "utf8" });
    expect(cjs.trim()).toBe("function true");
  });

  it("type-checks a consumer that uses its types (with the DOM library, without @types/node)", () => {
    writeFileSync(
      path.join(consumer, "consumer.ts"),
      `import { Client, APIError, isEventType, verifyWebhook, type Lookup, type Money, type Job, type WebhookEvent } from "@svc/sdk";
const client = new Client({ apiKey: "svc_test_x", baseUrl: "http://127.0.0.1:1", maxRetries: 1 });
export async function use(body: string, headers: Headers): Promise<string> {
  const lookup: Lookup = await client.lookups.create({ numbers: ["+12025550100"], checks: ["spam"] });
  const balance: Money = (await client.account.get()).balance;
  const amount: string = balance.amount;
  // @ts-expect-error money is a string, never a number
  const asNumber: number = balance.amount;
  const job: Job = await client.jobs.waitForJob("job_x", { onProgress: (j) => j.progress.done });
  for await (const row of client.jobs.results(job.id, { registered: null })) {
    const e164: string | null = row.e164;
    void e164;
  }
  const event: WebhookEvent = await verifyWebhook(body, headers, "whsec_x");
  if (isEventType(event, "job.completed")) {
    const url: string = event.data.results_url;
    void url;
  }
  try {
    await client.lookups.get(lookup.id, { wait: 5 });
  } catch (err) {
    if (err instanceof APIError) return err.code + (err.requestId ?? "");
  }
  // @ts-expect-error unknown method
  client.lookups.remove(lookup.id);
  void asNumber;
  return amount;
}
`,
    );
    writeFileSync(path.join(consumer, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2023", "dom", "dom.iterable"], types: [], skipLibCheck: false }, files: ["consumer.ts"] }));
    const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
    let output = "";
    try {
      output = execFileSync(process.execPath, [tsc, "-p", consumer], { cwd: consumer, encoding: "utf8" });
    } catch (err) {
      output = `${(err as { stdout?: string }).stdout ?? ""}${(err as { stderr?: string }).stderr ?? ""}`;
    }
    expect(output).toBe("");
  });
});
