import { Client, InvalidArgumentError, isLoopbackHost, parseAllowInsecureHttp } from "@svc/sdk";
import { accountBody, ScriptedServer } from "./scripted-server";

/**
 * The key is in the Authorization header of every request, so the SDK refuses to send
 * it over plain http to anything but this machine unless the caller says so with
 * `allowInsecureHttp: true`.
 */
const KEY = "svc_test_BaseUrlRuleKey00000000000000000abcdef";

describe("plain http only to loopback", () => {
  const saved = process.env.SVC_BASE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.SVC_BASE_URL;
    else process.env.SVC_BASE_URL = saved;
  });

  it.each(["http://api.example.com", "http://10.0.0.5:8080", "http://192.168.1.10/v1", "http://[2001:db8::1]:8080", "http://127.example.com", "http://localhost.example.com"])(
    "refuses %s with invalid_argument (param baseUrl), before anything is sent",
    (baseUrl) => {
      const err = (() => {
        try {
          new Client({ apiKey: KEY, baseUrl });
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect(err).toMatchObject({ code: "invalid_argument", param: "baseUrl", status: null, attempts: 0 });
      expect((err as Error).message).toContain("allowInsecureHttp");
      expect((err as Error).message).not.toContain(KEY);
    },
  );

  it("the same for SVC_BASE_URL and for a client without a key", () => {
    process.env.SVC_BASE_URL = "http://api.example.com";
    expect(() => new Client({ apiKey: KEY })).toThrow(InvalidArgumentError);
    expect(() => new Client()).toThrow(/Refusing plain http to api\.example\.com/);
  });

  it.each(["http://localhost:8080", "http://127.0.0.1:1", "http://127.1.2.3", "http://[::1]:8080", "http://LOCALHOST", "http://[::ffff:127.0.0.1]:80", "https://api.example.com", "https://10.0.0.5"])("accepts %s", (baseUrl) => {
    expect(() => new Client({ apiKey: KEY, baseUrl })).not.toThrow();
  });

  it("allowInsecureHttp: true is the explicit opt-in, kept by withOptions", () => {
    const c = new Client({ apiKey: KEY, baseUrl: "http://api.internal:8080", allowInsecureHttp: true });
    expect(c.baseUrl).toBe("http://api.internal:8080");
    expect(c.withOptions({ timeoutMs: 1_000 }).baseUrl).toBe("http://api.internal:8080");
    expect(() => c.withOptions({ allowInsecureHttp: false })).toThrow(InvalidArgumentError);
  });

  it("the loopback rule, one implementation for the SDK, the CLI and the MCP server", () => {
    for (const h of ["localhost", "localhost.", "127.0.0.1", "127.255.255.254", "::1", "[::1]", "::ffff:7f00:1", "::ffff:127.0.0.2"]) expect([h, isLoopbackHost(h)]).toEqual([h, true]);
    for (const h of ["128.0.0.1", "127.0.0.256", "127.example.com", "0.0.0.0", "::", "10.0.0.1", "example.com", "::ffff:a00:1", "localhost.example.com"]) expect([h, isLoopbackHost(h)]).toEqual([h, false]);
  });

  it("SVC_ALLOW_INSECURE_HTTP as the CLI and the MCP server read it: 1/true, 0/false/unset, anything else refused", () => {
    expect([undefined, "", "0", "false", " FALSE "].map(parseAllowInsecureHttp)).toEqual([false, false, false, false, false]);
    expect(["1", "true", "TRUE"].map(parseAllowInsecureHttp)).toEqual([true, true, true]);
    expect(() => parseAllowInsecureHttp("yes")).toThrow(InvalidArgumentError);
  });

  it("a loopback http server is reached as before; with the opt-in, a non-loopback one too", async () => {
    const server = await new ScriptedServer().start();
    try {
      server.steps({ status: 200, json: accountBody() });
      await expect(new Client({ apiKey: KEY, baseUrl: server.url }).account.get()).resolves.toMatchObject({ id: "acct_1" });
      // 0.0.0.0 is not a loopback name, yet on Linux it reaches this machine: the opt-in really sends.
      const beyond = server.url.replace("127.0.0.1", "0.0.0.0");
      expect(() => new Client({ apiKey: KEY, baseUrl: beyond })).toThrow(InvalidArgumentError);
      await expect(new Client({ apiKey: KEY, baseUrl: beyond, allowInsecureHttp: true }).account.get()).resolves.toMatchObject({ id: "acct_1" });
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });
});
