import { Type } from "@sinclair/typebox";
import { API_VERSION, ROUTES, type RouteDef } from "@svc/contract";
import { setAccountCheck } from "@svc/store";
import { PUBLIC_SANDBOX_KEY } from "@svc/domain";
import { createTestEnv } from "../support/env";
import { accountWithKey, bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

describe("GET /v1/health", () => {
  it("is 200 when the database answers", async () => {
    const res = await gw.http().get("/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", database: "ok" });
    // A monitor's cache-buster is ignored.
    expect((await gw.http().get("/v1/health?t=1700000000")).status).toBe(200);
  });

  it("is 503 with Retry-After when the database does not", async () => {
    // A gateway whose database goes away after start-up: its pool can no longer reach Postgres.
    const other = await startTestGateway({ env: await createTestEnv() });
    await other.store.pool.end();
    const res = await other.http().get("/v1/health");
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("5");
    expect(res.body.error).toMatchObject({ code: "temporarily_unavailable", retryable: true, request_id: res.headers["x-request-id"] });
    // Any other failure is a 500 that says nothing internal, with the request id to quote.
    const key = await other.http().get("/v1/services").set(bearer(PUBLIC_SANDBOX_KEY));
    expect(key.status).toBe(500);
    expect(key.body.error).toEqual({
      code: "internal_error",
      message: "Something went wrong on our side.",
      status: 500,
      retryable: true,
      param: null,
      doc_url: expect.stringContaining("#internal_error"),
      request_id: key.headers["x-request-id"],
    });
    await other.close().catch(() => undefined);
  });
});

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document for v1 built from the validating schemas", async () => {
    const res = await gw.http().get("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.info.version).toBe(API_VERSION);
    expect(res.body.info.version).toMatch(/^1\.\d+\.\d+$/);
    for (const route of ROUTES) expect(res.body.paths[route.path][route.method].operationId).toBe(route.operationId);
    const lookupBody = res.body.paths["/v1/lookup"].post.requestBody.content["application/json"].schema;
    const resolved = lookupBody.$ref ? res.body.components.schemas[lookupBody.$ref.split("/").pop()] : lookupBody;
    expect(resolved.properties.checks.maxItems).toBe(20);
    expect(resolved.additionalProperties).toBe(false);
  });
});

describe("GET /v1/services", () => {
  it("shows the public catalog without a key, hiding coming-soon checks", async () => {
    const res = await gw.http().get("/v1/services");
    expect(res.status).toBe(200);
    expect(res.body.account_specific).toBe(false);
    const codes = res.body.data.map((s: { code: string }) => s.code);
    expect(codes).toEqual(expect.arrayContaining(["number.spam", "whatsapp", "carrier", "email", "signal.registered"]));
    expect(codes).not.toContain("number.hlr");
    const spam = res.body.data.find((s: { code: string }) => s.code === "number.spam");
    expect(spam).toMatchObject({ aliases: ["spam"], input: "number", realtime: true, countries: ["US", "CA", "DE"], prices: { live: { amount: "0.002", currency: "USD" }, test: { amount: "0.00", currency: "USD" } } });
    expect(res.body.data.find((s: { code: string }) => s.code === "signal.registered").realtime).toBe(false);
  });

  it("shows the account's checks at its prices with a key", async () => {
    const k = await accountWithKey(gw.store, gw.env.keyHashSecret);
    await setAccountCheck(gw.store.pool, { accountId: k.accountId, checkCode: "number.hlr", enabled: true });
    await setAccountCheck(gw.store.pool, { accountId: k.accountId, checkCode: "number.spam", livePriceMicros: 1500n });
    await setAccountCheck(gw.store.pool, { accountId: k.accountId, checkCode: "carrier", enabled: false });
    const res = await gw.http().get("/v1/services").set(bearer(k.key));
    expect(res.body.account_specific).toBe(true);
    const byCode = Object.fromEntries(res.body.data.map((s: { code: string }) => [s.code, s]));
    expect(byCode["number.hlr"]).toMatchObject({ aliases: ["hlr"], prices: { live: { amount: "0.006" } } });
    expect(byCode["number.spam"].prices.live.amount).toBe("0.0015");
    expect(byCode.carrier).toBeUndefined();
  });

  it("refuses a bad key rather than silently showing the public catalog", async () => {
    expect((await gw.http().get("/v1/services").set(bearer("svc_live_bogus"))).status).toBe(401);
  });
});

describe("deprecation", () => {
  it("adds Deprecation, Sunset and Link headers to a deprecated operation", async () => {
    const deprecated: RouteDef = {
      operationId: "legacyPing",
      method: "get",
      path: "/v1/legacy-ping",
      tag: "System",
      summary: "old",
      auth: "none",
      query: Type.Object({}),
      responses: { 200: { description: "ok" } },
      errors: [],
      deprecation: { deprecatedAt: new Date("2026-01-01T00:00:00Z"), sunset: new Date("2027-01-01T00:00:00Z"), changelogUrl: "https://docs.example.test/changelog#legacy-ping" },
    };
    const { createApp } = await import("../../services/gateway/src/app");
    const request = (await import("supertest")).default;
    const app = createApp(gw.deps, { routes: [deprecated], handlers: { legacyPing: async () => ({ status: 200, body: { ok: true } }) } });
    const res = await request(app).get("/v1/legacy-ping");
    expect(res.status).toBe(200);
    expect(res.headers.deprecation).toBe("@1767225600");
    expect(res.headers.sunset).toBe("Fri, 01 Jan 2027 00:00:00 GMT");
    expect(res.headers.link).toBe('<https://docs.example.test/changelog#legacy-ping>; rel="deprecation"; type="text/html"');
    const current = await request(app).get("/v1/health");
    expect(current.headers.deprecation).toBeUndefined();
  });
});

describe("error documentation", () => {
  it("serves the page every doc_url points at, with an anchor per code", async () => {
    const res = await gw.http().get("/docs/errors");
    expect(res.status).toBe(200);
    for (const code of ["invalid_request", "unauthorized", "suspected_enumeration", "temporarily_unavailable"]) expect(res.text).toContain(`id="${code}"`);
  });
});
