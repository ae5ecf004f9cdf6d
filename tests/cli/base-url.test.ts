import { accountBody, ScriptedServer } from "../sdk/scripted-server";
import { expectNoKey, svc } from "./run";

/**
 * `svc` builds its client with the SDK's rule: the key is in every request, so a plain
 * http base URL must point at this machine (localhost, 127.0.0.0/8, ::1) unless
 * `--allow-insecure-http` or SVC_ALLOW_INSECURE_HTTP=1 says otherwise.
 */
const KEY = "svc_test_CliBaseUrlRuleKey000000000000000abcdef";
const server = new ScriptedServer();
beforeAll(() => server.start());
afterAll(() => server.close());
beforeEach(() => void server.steps({ status: 200, json: accountBody() }));

/** The scripted server (bound to 127.0.0.1) by an address that is not loopback by name: on Linux, 0.0.0.0 reaches this machine. */
const nonLoopbackUrl = () => server.url.replace("127.0.0.1", "0.0.0.0");

describe("plain http beyond loopback", () => {
  it("is refused before anything is sent, from --base-url or SVC_BASE_URL: exit 2, naming the flag and the variable", async () => {
    for (const run of [await svc(["account", "--base-url", nonLoopbackUrl()], { key: KEY }), await svc(["account"], { key: KEY, baseUrl: "http://api.example.com" })]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("Refusing plain http");
      expect(run.stderr).toContain("--allow-insecure-http or set SVC_ALLOW_INSECURE_HTTP=1");
      expect(run.stderr).toContain("(invalid_argument)");
      expectNoKey(KEY, run.stdout, run.stderr);
    }
    expect(server.requests).toHaveLength(0);
  });

  it("--json: the refusal is an invalid_argument error object for param baseUrl", async () => {
    const run = await svc(["--json", "account", "--base-url", "http://10.0.0.7:8080"], { key: KEY });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr.trim()).error).toMatchObject({ code: "invalid_argument", param: "baseUrl", status: null });
  });

  it("--allow-insecure-http or SVC_ALLOW_INSECURE_HTTP=1 sends it anyway; loopback needs neither", async () => {
    const flagged = await svc(["--json", "account", "--base-url", nonLoopbackUrl(), "--allow-insecure-http"], { key: KEY });
    expect(flagged.code).toBe(0);
    expect(JSON.parse(flagged.stdout).id).toBe("acct_1");
    const byEnv = await svc(["--json", "account"], { key: KEY, baseUrl: nonLoopbackUrl(), env: { SVC_ALLOW_INSECURE_HTTP: "1" } });
    expect(byEnv.code).toBe(0);
    const loopback = await svc(["--json", "account"], { key: KEY, baseUrl: server.url });
    expect(loopback.code).toBe(0);
    expect(server.requests).toHaveLength(3);
    expect(server.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it("SVC_ALLOW_INSECURE_HTTP with a value that is neither yes nor no is a usage error", async () => {
    const run = await svc(["account"], { key: KEY, baseUrl: server.url, env: { SVC_ALLOW_INSECURE_HTTP: "maybe" } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("SVC_ALLOW_INSECURE_HTTP must be 1/true or 0/false");
  });
});
