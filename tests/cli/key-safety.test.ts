import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { DEFAULT_SCOPES } from "@svc/domain";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { expectNoKey, svc, svcInTty, type Run } from "./run";

/**
 * "The CLI reads the key from the environment variable and never prints it — not
 * even in --verbose output": every output path of `svc`, run as a child process
 * against the real gateway with --verbose, success and failure (API refusals, a
 * refused key, no answer, an answer that is not the API's, usage errors, a key
 * typed as an argument, a terminal), is searched for any 8 characters of the key.
 */
let gw: TestGateway;
let k: TestKey;
const dir = mkdtempSync(path.join(tmpdir(), "svc-cli-key-"));
const runs: { args: string[]; run: Run }[] = [];

async function verbose(args: string[], opts: { key?: string; baseUrl?: string; input?: string } = {}): Promise<Run> {
  const key = opts.key ?? k.key;
  const run = await svc(["--verbose", ...args], { key, baseUrl: opts.baseUrl ?? gw.url, input: opts.input });
  runs.push({ args, run });
  expectNoKey(key, run.stdout, run.stderr);
  return run;
}

beforeAll(async () => {
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8" } });
  k = await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: [...DEFAULT_SCOPES, "webhooks:manage"] });
});
afterAll(async () => {
  await gw?.close();
});

describe("the key is never printed", () => {
  it("--verbose shows each request and answer, and where the key came from, but not the key (every command, human and --json)", async () => {
    const list = path.join(dir, "list.txt");
    writeFileSync(list, "+12025550100\n+12025550101\ndeliverable@example.com\n");
    const lookup = await verbose(["lookup", "+12025550101"]);
    expect(lookup.code).toBe(0);
    expect(lookup.stderr).toMatch(/^svc: API key: from SVC_API_KEY \(test key\)$/m);
    expect(lookup.stderr).toMatch(/^svc: request \{"operation":"createLookup","method":"POST","path":"\/v1\/lookup","attempt":1\}$/m);
    expect(lookup.stderr).toMatch(/^svc: response \{"operation":"createLookup","status":200,"requestId":"req_/m);

    const created = await verbose(["--json", "jobs", "create", list, "--checks", "spam,email", "--wait"]);
    expect(created.code).toBe(0);
    const id = (JSON.parse(created.stdout) as { id: string }).id;
    for (const args of [
      ["jobs", "estimate", list, "--checks", "spam,email"],
      ["jobs", "get", id],
      ["jobs", "watch", id, "--json"],
      ["jobs", "results", id],
      ["jobs", "results", id, "--json"],
      ["jobs", "download", id, "-o", path.join(dir, "out.csv")],
      ["jobs", "download", id, "-o", "-"],
      ["account"],
      ["limits", "--json"],
      ["usage", "--from", "-1d", "--to", "today"],
      ["services"],
      ["webhooks", "list"],
      ["--help"],
      ["jobs", "create", "--help"],
    ]) {
      const r = await verbose(args);
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
    }
    expect(readFileSync(path.join(dir, "out.csv"), "utf8")).not.toContain(k.key);

    const hook = await verbose(["--json", "webhooks", "create", "--url", "https://127.0.0.1:9/h", "--events", "job.completed"]);
    const we = (JSON.parse(hook.stdout) as { id: string }).id;
    expect((await verbose(["webhooks", "test", we])).code).toBe(0);
    expect((await verbose(["webhooks", "delete", we])).code).toBe(0);
  }, 60_000);

  it("on every failure path: API refusals, a refused key, no answer, a wrong answer, usage errors (with --verbose stack traces)", async () => {
    expect((await verbose(["lookup", "--checks", "nope", "+12025550100"])).code).toBe(3);
    expect((await verbose(["--json", "jobs", "get", "job_doesNotExist"])).code).toBe(3);
    expect((await verbose(["jobs", "cancel", "job_doesNotExist"])).code).toBe(3);

    const unknown = "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000";
    const refused = await verbose(["account"], { key: unknown });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/code: unauthorized \(HTTP 401\)/);
    expect(refused.stderr).toMatch(/UnauthorizedError/); // --verbose adds the stack

    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const network = await verbose(["account"], { baseUrl: `http://127.0.0.1:${closed}` });
    expect(network.code).toBe(4);
    expect(network.stderr).toMatch(/ConnectionError/);

    // A server that echoes the Authorization header back in a body that is not the API's.
    const echo: Server = createServer((req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "account", authorization: req.headers.authorization })));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    try {
      const wrong = await verbose(["account"], { baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}` });
      expect(wrong.code).toBe(5);
      const wrongJson = await verbose(["account", "--json"], { baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}` });
      expect(wrongJson.code).toBe(5);
    } finally {
      echo.close();
    }

    for (const args of [["lookup"], ["jobs", "create", "nope.csv", "--checks", "spam"], ["usage", "--from", "x", "--to", "y"], ["bogus"], ["--json", "bogus"]]) {
      const r = await verbose(args, { input: "" });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
    }
  }, 60_000);

  it("a key typed as an argument is not echoed: not by commander's errors, not by the API's answer, not in --json", async () => {
    // The API echoes `input` in the creation response of a lookup: the key would be printed back.
    const asNumber = await verbose(["lookup", "--checks", "spam", k.key]);
    expect(asNumber.code).toBe(0);
    expect(asNumber.stdout).toMatch(/^\s+1\s+\[redacted\]\s+number\.spam\s+invalid/m);
    expect((await verbose(["--json", "lookup", "--checks", "spam", k.key])).code).toBe(0);
    const asCommand = await verbose([k.key]);
    expect(asCommand.code).toBe(2);
    expect(asCommand.stderr).toMatch(/unknown command '\[redacted\]'/);
    expect((await verbose(["--json", k.key])).code).toBe(2);
    // Another key than SVC_API_KEY, recognised by its shape.
    const other = "svc_live_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB111111";
    const typed = await svc(["--verbose", other], { key: k.key, baseUrl: gw.url });
    expect(typed.stderr).toMatch(/unknown command 'svc_live_\[redacted\]'/);
    expectNoKey(other, typed.stdout, typed.stderr);
  });

  it("on a terminal, --verbose with a progress path and a chart, the key is not on the screen", async () => {
    const list = path.join(dir, "tty.txt");
    writeFileSync(list, "+12025550100\n");
    for (const args of [["--verbose", "jobs", "create", list, "--checks", "spam", "--wait"], ["--verbose", "usage", "--from", "-1d", "--to", "today"], ["--verbose", "account"]]) {
      const r = await svcInTty(args, { key: k.key, baseUrl: gw.url });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      expectNoKey(k.key, r.stdout, r.stderr);
    }
  });

  it("covered every run above (sanity: the checks ran on real output)", () => {
    expect(runs.length).toBeGreaterThan(30);
    expect(runs.some((r) => r.run.stderr.includes("svc: request"))).toBe(true);
  });
});
