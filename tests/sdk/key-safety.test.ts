import { inspect } from "node:util";
import { Client, MissingApiKeyError, type Logger } from "@svc/sdk";
import { accountBody, apiError, lookupBody, ScriptedServer } from "./scripted-server";

/**
 * "The SDKs ... read the key from one environment variable and never print it":
 * every way a client, an error or a log line can be turned into text is checked
 * for the key.
 */
const KEY = "svc_test_NeverPrintThisKey0123456789abcdefABCDEF";
const server = new ScriptedServer();
beforeAll(() => server.start());
afterAll(() => server.close());

/** Everything a program might print of a value. */
function renderings(value: unknown): string[] {
  const out = [inspect(value, { depth: 10, showHidden: true, getters: true }), String(value)];
  try {
    out.push(JSON.stringify(value) ?? "");
  } catch {
    // circular: inspect covered it
  }
  if (value instanceof Error) {
    out.push(value.stack ?? "", value.message);
    for (let c: unknown = value.cause; c; c = (c as Error).cause) out.push(inspect(c, { depth: 10, showHidden: true }), String((c as Error).stack));
  }
  return out;
}
const expectNoKey = (value: unknown) => {
  for (const text of renderings(value)) expect(text).not.toContain(KEY);
};

const lines: string[] = [];
const logger: Logger = {
  debug: (message, fields) => void lines.push(`${message} ${JSON.stringify(fields)} ${inspect(fields, { depth: 10 })}`),
  warn: (message, fields) => void lines.push(`${message} ${JSON.stringify(fields)}`),
};

describe("the API key is never printed", () => {
  const saved = process.env.SVC_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.SVC_API_KEY;
    else process.env.SVC_API_KEY = saved;
  });

  it("reads SVC_API_KEY when no key is passed, and sends it only in the Authorization header", async () => {
    process.env.SVC_API_KEY = KEY;
    server.steps({ status: 200, json: accountBody() });
    const c = new Client({ baseUrl: server.url });
    expect(c.hasApiKey).toBe(true);
    await c.account.get();
    const req = server.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.url).not.toContain(KEY);
    expect(JSON.stringify({ ...req.headers, authorization: undefined })).not.toContain(KEY);
  });

  it("without a key: missing_api_key before anything is sent (calls that need no key still work)", async () => {
    delete process.env.SVC_API_KEY;
    server.steps({ status: 200, json: { object: "list", account_specific: false, data: [] } });
    const c = new Client({ baseUrl: server.url });
    expect(c.hasApiKey).toBe(false);
    const err = await c.account.get().catch((e) => e);
    expect(err).toBeInstanceOf(MissingApiKeyError);
    expect(err).toMatchObject({ code: "missing_api_key", status: null, requestId: null, attempts: 0 });
    expect(server.requests).toHaveLength(0);
    await c.services.list();
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("not in util.inspect, console output, JSON.stringify or String() of the client, its resources or a derived client", () => {
    const c = new Client({ apiKey: KEY, baseUrl: server.url, logger });
    for (const v of [c, c.lookups, c.jobs, c.account, c.webhookEndpoints, c.webhooks, c.withOptions({ timeoutMs: 1_000 })]) expectNoKey(v);
    expect(inspect(c)).toContain("hasApiKey");
    expect(Object.keys(c)).not.toContain("apiKey");
    const viaConsole: string[] = [];
    const original = console.log;
    console.log = (...args: unknown[]) => void viaConsole.push(args.map((a) => inspect(a, { depth: 10 })).join(" "));
    try {
      console.log(c, c.jobs);
    } finally {
      console.log = original;
    }
    expect(viaConsole.join("\n")).not.toContain(KEY);
  });

  it("not in any error the client throws, on every path: API error, reset, timeout, invalid answer, invalid argument", async () => {
    const c = new Client({ apiKey: KEY, baseUrl: server.url, logger, maxRetries: 1, timeoutMs: 200, retry: { sleep: async () => undefined } });
    const errors: unknown[] = [];
    server.steps({ status: 401, json: apiError("unauthorized", 401, false) });
    errors.push(await c.account.get().catch((e) => e));
    server.steps({ status: 503, json: apiError("temporarily_unavailable", 503, true), headers: { "Retry-After": "0" } });
    errors.push(await c.lookups.create({ numbers: ["+12025550108"], checks: ["spam"] }).catch((e) => e));
    server.steps("reset");
    errors.push(await c.account.get().catch((e) => e));
    server.steps("stall");
    errors.push(await c.account.get().catch((e) => e));
    server.steps({ status: 200, json: { nope: true } });
    errors.push(await c.account.get().catch((e) => e));
    errors.push(await c.jobs.get("").catch((e) => e));
    errors.push(await c.lookups.create({ numbers: [], checks: ["spam"] }, { idempotencyKey: "" }).catch((e) => e));
    const closed = new Client({ apiKey: KEY, baseUrl: "http://127.0.0.1:1", maxRetries: 0 });
    errors.push(await closed.account.get().catch((e) => e));
    expect(errors.map((e) => (e as { code: string }).code)).toEqual(["unauthorized", "temporarily_unavailable", "connection_error", "timeout", "invalid_response", "invalid_argument", "invalid_argument", "connection_error"]);
    for (const e of errors) expectNoKey(e);
  });

  it("not in an error even when a custom fetch puts the key in its own exception", async () => {
    const leaky = async (_url: string, init: RequestInit) => {
      const auth = (init.headers as Record<string, string>).Authorization;
      throw new TypeError(`proxy refused request with headers ${auth}`, { cause: new Error(`auth=${auth}`) });
    };
    const c = new Client({ apiKey: KEY, baseUrl: server.url, fetch: leaky, maxRetries: 0, logger });
    const err = await c.account.get().catch((e) => e);
    expect(err.code).toBe("connection_error");
    expect(err.message).toContain("[redacted]");
    expectNoKey(err);
  });

  it("not in an API error whose answer echoes the Authorization header or the key: message, suggestion, body fields and headers are scrubbed", async () => {
    const c = new Client({ apiKey: KEY, baseUrl: server.url, maxRetries: 1, retry: { sleep: async () => undefined } });
    const echo = (status: number, code: string, retryable: boolean) => (_n: number, req: { headers: Record<string, string | string[] | undefined> }) => {
      const auth = String(req.headers.authorization);
      return {
        status,
        json: {
          error: {
            code,
            message: `Refused request with Authorization: ${auth}`,
            status,
            retryable,
            param: null,
            suggestion: `Check the key ${KEY.slice(0, 20)}… (full: ${KEY}); its secret part is ${KEY.slice("svc_test_".length)}`,
            request_id: "req_echo",
            echoed: { headers: { authorization: auth }, keys: [KEY] },
          },
        },
        headers: { "X-Debug-Authorization": auth },
      };
    };
    const errors: unknown[] = [];
    server.script(echo(401, "unauthorized", false));
    errors.push(await c.account.get().catch((e) => e));
    server.script(echo(503, "temporarily_unavailable", true)); // retried, then thrown: the last answer's error is scrubbed too
    errors.push(await c.lookups.create({ numbers: ["+12025550100"], checks: ["spam"] }).catch((e) => e));
    server.script(echo(418, "brand_new_refusal", false)); // an unknown code, classed by status
    errors.push(await c.request("getAccount").catch((e) => e));
    expect(errors.map((e) => (e as { code: string }).code)).toEqual(["unauthorized", "temporarily_unavailable", "brand_new_refusal"]);
    for (const e of errors) {
      expectNoKey(e);
      const err = e as { message: string; suggestion: string; body: Record<string, unknown>; headers: Headers };
      expect(err.message).toBe("Refused request with Authorization: Bearer [redacted]");
      expect(err.suggestion).not.toContain(KEY.slice("svc_test_".length));
      expect(err.suggestion).toContain("[redacted]");
      expect(JSON.stringify(err.body)).not.toContain(KEY.slice("svc_test_".length));
      expect(err.body.echoed).toEqual({ headers: { authorization: "Bearer [redacted]" }, keys: ["[redacted]"] });
      expect(err.headers.get("x-debug-authorization")).toBe("Bearer [redacted]");
      expect(inspect(e, { depth: 10, showHidden: true })).not.toContain(KEY.slice("svc_test_".length));
    }
  });

  it("not in any log line (requests, answers, retries), nor in the response object of request()", async () => {
    const c = new Client({ apiKey: KEY, baseUrl: server.url, logger, retry: { sleep: async () => undefined } });
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "0" } }, { status: 200, json: lookupBody(), headers: { Deprecation: "@1700000000" } });
    const res = await c.request("createLookup", { body: { numbers: ["+12025550100"], checks: ["spam"] } });
    expect(res.attempts).toBe(2);
    expectNoKey(res);
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.some((l) => l.startsWith("retry "))).toBe(true);
    expect(lines.some((l) => l.startsWith("deprecated operation "))).toBe(true);
    for (const line of lines) expect(line).not.toContain(KEY);
  });
});
