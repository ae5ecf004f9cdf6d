import {
  APIError,
  Client,
  ConnectionError,
  DailyCapReachedError,
  InvalidArgumentError,
  InvalidRequestError,
  InvalidResponseError,
  PermissionDeniedError,
  RateLimitedError,
  ServerError,
  TemporarilyUnavailableError,
  TimeoutError,
  backoffDelay,
  parseRetryAfter,
} from "@svc/sdk";
import { accountBody, apiError, lookupBody, recordingSleep, ScriptedServer } from "./scripted-server";

/**
 * The retry policy against a real HTTP server on loopback that answers from a
 * script: what is retried, how long the client waits, and that a POST keeps one
 * Idempotency-Key across its attempts.
 */
const server = new ScriptedServer();
beforeAll(() => server.start());
afterAll(() => server.close());

const KEY = "svc_test_retryPolicyKey000000000000000000abcdef";
const LOOKUP = { numbers: ["+12025550100"], checks: ["spam"] };

function client(extra: { random?: () => number; maxRetries?: number; timeoutMs?: number; totalTimeoutMs?: number; maxRetryAfterMs?: number } = {}) {
  const rec = recordingSleep();
  const c = new Client({
    apiKey: KEY,
    baseUrl: server.url,
    maxRetries: extra.maxRetries ?? 2,
    timeoutMs: extra.timeoutMs ?? 5_000,
    totalTimeoutMs: extra.totalTimeoutMs,
    retry: { sleep: rec.sleep, random: extra.random ?? (() => 0.5), ...(extra.maxRetryAfterMs ? { maxRetryAfterMs: extra.maxRetryAfterMs } : {}) },
  });
  return { c, waits: rec.waits };
}
const idempotencyKeys = () => server.requests.map((r) => r.headers["idempotency-key"]);

describe("what is retried", () => {
  it("429 rate_limited with Retry-After: waits exactly Retry-After, then succeeds; one Idempotency-Key for every attempt", async () => {
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "2" } }, { status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "1" } }, { status: 200, json: lookupBody() });
    const { c, waits } = client();
    const lookup = await c.lookups.create(LOOKUP);
    expect(lookup.id).toBe("lkp_scripted");
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([2000, 1000]);
    const keys = idempotencyKeys();
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
    expect(server.requests.map((r) => JSON.parse(r.body))).toEqual([LOOKUP, LOOKUP, LOOKUP]);
  });

  it("each call gets its own generated key; a caller's own key is sent unchanged on every attempt", async () => {
    server.steps({ status: 200, json: lookupBody() });
    const { c } = client();
    await c.lookups.create(LOOKUP);
    await c.lookups.create(LOOKUP);
    const [a, b] = idempotencyKeys();
    expect(a).not.toBe(b);

    server.steps({ status: 500, json: apiError("internal_error", 500, true) }, { status: 503, json: apiError("temporarily_unavailable", 503, true) }, { status: 201, json: jobBody() });
    await c.jobs.create({ numbers: ["+12025550100"], checks: ["spam"] }, { idempotencyKey: "order-4711" });
    expect(idempotencyKeys()).toEqual(["order-4711", "order-4711", "order-4711"]);
  });

  it("500 and 503 without Retry-After: exponential backoff with full jitter (random × min(8 s, 0.5 s × 2^n))", async () => {
    server.steps({ status: 500, json: apiError("internal_error", 500, true) }, { status: 503, json: apiError("temporarily_unavailable", 503, true) }, { status: 500, json: apiError("internal_error", 500, true) }, { status: 200, json: accountBody() });
    const { c, waits } = client({ maxRetries: 5, random: () => 0.999 });
    await c.account.get();
    expect(server.requests).toHaveLength(4);
    expect(waits).toEqual([499, 999, 1998]); // just under the ceilings 500, 1000, 2000

    const zero = client({ maxRetries: 5, random: () => 0 });
    server.steps({ status: 500, json: apiError("internal_error", 500, true) }, { status: 200, json: accountBody() });
    await zero.c.account.get();
    expect(zero.waits).toEqual([0]); // full jitter reaches down to 0
    expect(backoffDelay(10, { initialDelayMs: 500, maxDelayMs: 8_000, random: () => 0.999 })).toBe(7992); // capped at 8 s
  });

  it("gives up after maxRetries with the last answer's error, its request id and the number of attempts", async () => {
    server.steps({ status: 503, json: apiError("temporarily_unavailable", 503, true), headers: { "Retry-After": "0" } });
    const { c, waits } = client({ maxRetries: 2 });
    const err = await c.account.get().catch((e) => e);
    expect(err).toBeInstanceOf(TemporarilyUnavailableError);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ code: "temporarily_unavailable", status: 503, retryable: true, requestId: "req_scripted_3", attempts: 3, retryAfterMs: 0 });
    expect(waits).toEqual([0, 0]);
  });

  it("never retries a non-retryable answer (400 invalid_request)", async () => {
    server.steps({ status: 400, json: apiError("invalid_request", 400, false, { param: "checks[0]", suggestion: "See GET /v1/services." }) });
    const { c, waits } = client();
    const err = await c.lookups.create(LOOKUP).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ code: "invalid_request", status: 400, retryable: false, param: "checks[0]", requestId: "req_scripted_1", attempts: 1, suggestion: "See GET /v1/services." });
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("follows the body's retryable flag, not the status: a retryable 409 is retried, a 429 spend_cap_reached is not", async () => {
    server.steps({ status: 409, json: apiError("idempotency_request_in_progress", 409, true) }, { status: 200, json: lookupBody() });
    const { c } = client();
    await c.lookups.create(LOOKUP);
    expect(server.requests).toHaveLength(2);

    server.steps({ status: 429, json: apiError("spend_cap_reached", 429, false), headers: { "Retry-After": "5" } });
    const err = await c.lookups.create(LOOKUP).catch((e) => e);
    expect(err.code).toBe("spend_cap_reached");
    expect(server.requests).toHaveLength(1);
  });

  it("unknown codes: the class falls back to the HTTP status, the code and retryable flag are kept", async () => {
    server.steps({ status: 403, json: apiError("brand_new_refusal", 403, false) });
    const { c } = client();
    const refused = await c.account.get().catch((e) => e);
    expect(refused).toBeInstanceOf(PermissionDeniedError);
    expect(refused.code).toBe("brand_new_refusal");

    server.steps({ status: 503, json: apiError("brand_new_outage", 503, true) }, { status: 200, json: accountBody() });
    await c.account.get();
    expect(server.requests).toHaveLength(2);
  });

  it("a Retry-After longer than maxRetryAfterMs (60 s) is not waited for: thrown at once with retryAfterMs", async () => {
    server.steps({ status: 429, json: apiError("daily_cap_reached", 429, true), headers: { "Retry-After": "36000" } });
    const { c, waits } = client();
    const err = await c.lookups.create(LOOKUP).catch((e) => e);
    expect(err).toBeInstanceOf(DailyCapReachedError);
    expect(err.retryAfterMs).toBe(36_000_000);
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("an answer that is not an error object (a proxy's 502 page) is classified by status: 502 is retried", async () => {
    server.steps({ status: 502, text: "<html>Bad gateway</html>" }, { status: 502, text: "<html>Bad gateway</html>" }, { status: 502, text: "<html>Bad gateway</html>" });
    const { c } = client();
    const err = await c.account.get().catch((e) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ code: "http_502", status: 502, retryable: true, attempts: 3, body: null, requestId: "req_scripted_3" });
  });
});

describe("answers that never came", () => {
  it("a reset connection is retried for GETs and for POSTs with an Idempotency-Key (same key), never for other POSTs", async () => {
    server.steps("reset", "reset", { status: 200, json: accountBody() });
    const { c, waits } = client();
    await c.account.get();
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([250, 500]);

    server.steps("reset", { status: 200, json: lookupBody() });
    await c.lookups.create(LOOKUP);
    expect(server.requests).toHaveLength(2);
    expect(new Set(idempotencyKeys()).size).toBe(1);

    server.steps("reset", { status: 201, json: {} });
    const err = await c.webhookEndpoints.create({ url: "https://hooks.example.com/x", events: ["job.completed"] }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: "connection_error", status: null, requestId: null, retryable: false, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it("a stalled answer times out per attempt (timeoutMs) and is retried when safe", async () => {
    server.steps("stall", "stall", { status: 200, json: accountBody() });
    const { c } = client({ timeoutMs: 300 });
    const started = Date.now();
    await c.account.get();
    expect(server.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);

    server.steps("stall");
    const err = await c.account.get({ maxRetries: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: "timeout", attempts: 2, retryable: true });
  });

  it("totalTimeoutMs bounds the whole call, retries included", async () => {
    server.steps("stall");
    const { c } = client({ timeoutMs: 250, maxRetries: 10, totalTimeoutMs: 700 });
    const started = Date.now();
    const err = await c.account.get().catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });

  it("the server's `wait` is added to the attempt's time limit (a long poll is not a timeout)", async () => {
    server.script(() => "stall");
    const { c } = client({ timeoutMs: 200, maxRetries: 0 });
    const started = Date.now();
    const err = await c.jobs.get("job_x", { wait: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_150);
    expect(server.requests[0]?.url).toBe("/v1/jobs/job_x?wait=1");
  });
});

describe("one retry rule for POSTs: retried only when the API accepts an Idempotency-Key, or on a 429", () => {
  const ENDPOINT = { url: "https://hooks.example.com/x", events: ["job.completed"] };
  const posts = () => server.requests.filter((r) => r.method === "POST");

  it("POST /v1/webhook_endpoints (no Idempotency-Key in the contract) is sent once, without a key: not retried on a retryable 500, nor after a lost connection", async () => {
    const { c, waits } = client({ maxRetries: 3 });
    server.steps({ status: 500, json: apiError("internal_error", 500, true) }, { status: 201, json: {} });
    const answered = await c.webhookEndpoints.create(ENDPOINT).catch((e) => e);
    expect(answered).toBeInstanceOf(ServerError);
    // The API's own flag is kept for the caller, who knows whether a second endpoint would matter.
    expect(answered).toMatchObject({ code: "internal_error", status: 500, retryable: true, attempts: 1 });
    expect(posts()).toHaveLength(1);
    expect(server.requests[0]?.headers["idempotency-key"]).toBeUndefined();

    server.steps("reset", { status: 201, json: {} });
    const lost = await c.webhookEndpoints.create(ENDPOINT).catch((e) => e);
    expect(lost).toBeInstanceOf(ConnectionError);
    expect(lost).toMatchObject({ code: "connection_error", retryable: false, attempts: 1 });
    expect(posts()).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("the other POSTs and the PATCH without a key follow the same rule: a 503 or a 500 is not retried (test delivery, test key, endpoint update)", async () => {
    const { c } = client({ maxRetries: 3 });
    server.steps({ status: 503, json: apiError("temporarily_unavailable", 503, true), headers: { "Retry-After": "0" } });
    await expect(c.webhookEndpoints.test("we_1")).rejects.toMatchObject({ code: "temporarily_unavailable", attempts: 1 });
    expect(server.requests).toHaveLength(1);
    server.steps({ status: 500, json: apiError("internal_error", 500, true) });
    await expect(c.webhookEndpoints.update("we_1", { events: ["job.completed"] })).rejects.toMatchObject({ code: "internal_error", attempts: 1 });
    expect(server.requests).toHaveLength(1);
    server.steps({ status: 500, json: apiError("internal_error", 500, true) });
    await expect(c.request("createTestKey", { body: { email: "a@example.com" } })).rejects.toMatchObject({ code: "internal_error", attempts: 1 });
    expect(server.requests).toHaveLength(1);
    for (const r of server.requests) expect(r.headers["idempotency-key"]).toBeUndefined();
  });

  it("a 429 is a refusal before any work: retried for every operation, POST /v1/webhook_endpoints and the PATCH included, waiting Retry-After, still without a key", async () => {
    const rec = recordingSleep();
    // validateResponses off: the scripted success bodies are not full endpoint objects, and the retry rule is what is tested.
    const c = new Client({ apiKey: KEY, baseUrl: server.url, maxRetries: 3, validateResponses: false, retry: { sleep: rec.sleep, random: () => 0.5 } });
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "2" } }, { status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "1" } }, { status: 201, json: { id: "we_1" } });
    await expect(c.webhookEndpoints.create(ENDPOINT)).resolves.toMatchObject({ id: "we_1" });
    expect(posts()).toHaveLength(3);
    expect(rec.waits).toEqual([2000, 1000]);
    expect(server.requests.map((r) => r.headers["idempotency-key"])).toEqual([undefined, undefined, undefined]);
    expect(server.requests.map((r) => JSON.parse(r.body))).toEqual([ENDPOINT, ENDPOINT, ENDPOINT]);

    // A proxy's bare 429 (no error body) is classified by status, retryable, and retried too; without Retry-After, backoff.
    rec.waits.length = 0;
    server.steps({ status: 429, text: "Too Many Requests" }, { status: 200, json: { id: "we_1" } });
    await c.webhookEndpoints.update("we_1", { events: ["job.completed"] });
    expect(server.requests.map((r) => r.method)).toEqual(["PATCH", "PATCH"]);
    expect(rec.waits).toEqual([250]);

    // The rest of the rule holds: a 429 marked not retryable is not retried, nor is a Retry-After past maxRetryAfterMs waited for.
    server.steps({ status: 429, json: apiError("spend_cap_reached", 429, false), headers: { "Retry-After": "1" } });
    await expect(c.webhookEndpoints.test("we_1")).rejects.toMatchObject({ code: "spend_cap_reached", attempts: 1 });
    expect(server.requests).toHaveLength(1);
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "3600" } });
    await expect(c.request("createTestKey", { body: { email: "a@example.com" } })).rejects.toMatchObject({ code: "rate_limited", attempts: 1, retryAfterMs: 3_600_000 });
    expect(server.requests).toHaveLength(1);
    // And attempts stop at maxRetries.
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "0" } });
    await expect(c.webhookEndpoints.create(ENDPOINT)).rejects.toMatchObject({ code: "rate_limited", attempts: 4 });
    expect(posts()).toHaveLength(4);
  });

  it("POST /v1/lookup and POST /v1/jobs always carry an Idempotency-Key and are retried both on a retryable answer and after a lost connection, with the same key", async () => {
    const { c } = client({ maxRetries: 3 });
    server.steps({ status: 500, json: apiError("internal_error", 500, true) }, "reset", { status: 200, json: lookupBody() });
    await c.lookups.create(LOOKUP);
    expect(posts()).toHaveLength(3);
    expect(new Set(idempotencyKeys()).size).toBe(1);
    expect(idempotencyKeys()[0]).toMatch(/^[0-9a-f-]{36}$/);

    server.steps("reset", { status: 503, json: apiError("temporarily_unavailable", 503, true) }, { status: 201, json: jobBody() });
    await c.jobs.create({ numbers: ["+12025550100"], checks: ["spam"] });
    expect(posts()).toHaveLength(3);
    expect(new Set(idempotencyKeys()).size).toBe(1);

    // Through request() too: the key comes from the contract, not from the resource method.
    server.steps("reset", { status: 200, json: lookupBody() });
    await c.request("createLookup", { body: LOOKUP });
    expect(posts()).toHaveLength(2);
    expect(new Set(idempotencyKeys()).size).toBe(1);
  });

  it("POST /v1/jobs/estimate stores and charges nothing: retried like a GET, without a key", async () => {
    const rec = recordingSleep();
    const c = new Client({ apiKey: KEY, baseUrl: server.url, validateResponses: false, retry: { sleep: rec.sleep, random: () => 0.5 } });
    server.steps("reset", { status: 503, json: apiError("temporarily_unavailable", 503, true) }, { status: 200, json: { object: "estimate" } });
    await c.jobs.estimate({ numbers: ["+12025550100"], checks: ["spam"] });
    expect(posts()).toHaveLength(3);
    expect(idempotencyKeys()).toEqual([undefined, undefined, undefined]);
  });
});

describe("waits, aborts and refusals", () => {
  it("really sleeps Retry-After when no sleep is injected", async () => {
    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "1" } }, { status: 200, json: accountBody() });
    const c = new Client({ apiKey: KEY, baseUrl: server.url });
    await c.account.get();
    const [first, second] = server.requests;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("an AbortSignal stops a call in flight and during the wait between attempts, with the signal's reason", async () => {
    server.steps("stall");
    const c = new Client({ apiKey: KEY, baseUrl: server.url });
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("caller gave up")), 100);
    await expect(c.account.get({ signal: ctl.signal })).rejects.toThrow("caller gave up");

    server.steps({ status: 429, json: apiError("rate_limited", 429, true), headers: { "Retry-After": "30" } });
    const ctl2 = new AbortController();
    setTimeout(() => ctl2.abort(new Error("stop waiting")), 150);
    const started = Date.now();
    await expect(c.account.get({ signal: ctl2.signal })).rejects.toThrow("stop waiting");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.requests).toHaveLength(1);
  });

  it("refuses a malformed Idempotency-Key before sending anything", async () => {
    server.steps({ status: 200, json: lookupBody() });
    const { c } = client();
    const err = await c.lookups.create(LOOKUP, { idempotencyKey: "naïve" }).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err).toMatchObject({ code: "invalid_argument", param: "idempotencyKey" });
    expect(server.requests).toHaveLength(0);
  });

  it("Retry-After as an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5_000);
    expect(parseRetryAfter("3", now)).toBe(3_000);
    expect(parseRetryAfter("soon", now)).toBeNull();
  });
});

describe("response checks", () => {
  it("a 2xx body missing a documented field is invalid_response (with the request id), and is not retried", async () => {
    const { results: _r, ...broken } = lookupBody();
    server.steps({ status: 200, json: broken });
    const { c } = client();
    const err = await c.lookups.create(LOOKUP).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ code: "invalid_response", status: 200, requestId: "req_scripted_1", attempts: 1 });
    expect(err.message).toContain("results");
    expect(server.requests).toHaveLength(1);

    server.steps({ status: 200, text: "not json" });
    await expect(c.account.get()).rejects.toBeInstanceOf(InvalidResponseError);
    server.steps({ status: 200, json: { ...accountBody(), object: "lookup" } });
    await expect(c.account.get()).rejects.toThrow(/at object/);
    server.steps({ status: 200, json: { ...accountBody(), balance: { amount: 12.5, currency: "USD" } } });
    await expect(c.account.get()).rejects.toThrow(/balance\.amount/); // money stays a string
  });

  it("unknown fields and unknown enum values are accepted as they are", async () => {
    const body = lookupBody({ status: "partially_done", brand_new_field: { x: 1 } });
    (body.results[0]!.checks[0] as Record<string, unknown>).status = "some_future_status";
    (body.results[0]!.checks[0] as Record<string, unknown>).service = "number.future";
    server.steps({ status: 200, json: body });
    const { c } = client();
    const lookup = await c.lookups.create(LOOKUP);
    expect(lookup.status).toBe("partially_done");
    expect(lookup.results[0]?.checks[0]?.status).toBe("some_future_status");
    expect((lookup as unknown as Record<string, unknown>).brand_new_field).toEqual({ x: 1 });
  });

  it("rate_limited from a real error body is a RateLimitedError and an APIError", async () => {
    server.steps({ status: 429, json: apiError("rate_limited", 429, true) });
    const { c } = client({ maxRetries: 0 });
    const err = await c.account.get().catch((e) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toBeInstanceOf(APIError);
    expect(err.docUrl).toBe("http://x/docs/errors#rate_limited");
  });
});

function jobBody() {
  return {
    id: "job_scripted",
    object: "job",
    status: "completed",
    livemode: false,
    checks: ["number.spam"],
    progress: { total: 1, checks_total: 1, done: 1, conclusive: 0, non_billable: 1 },
    cost: { reserved: { amount: "0.00", currency: "USD" }, charged: { amount: "0.00", currency: "USD" } },
    max_cost: null,
    webhook_endpoint_id: null,
    progress_events: false,
    created_at: "2026-01-01T00:00:00.000Z",
    started_at: null,
    finished_at: "2026-01-01T00:00:00.000Z",
    purged_at: null,
    failure: null,
    results_url: "http://x/v1/jobs/job_scripted/results",
  };
}
