import { connect } from "node:net";
import { DEFAULT_SCOPES } from "@svc/domain";
import { bearer, accountWithKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => gw.close());

describe("request ids and the error object", () => {
  it("puts a req_ id on every response and the same id in error.request_id", async () => {
    const ok = await gw.http().get("/v1/health");
    expect(ok.status).toBe(200);
    expect(ok.headers["x-request-id"]).toMatch(/^req_[0-9A-Za-z]+$/);

    const missing = await gw.http().get("/v1/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({
      code: "not_found",
      message: expect.any(String),
      status: 404,
      retryable: false,
      param: null,
      doc_url: `${gw.url}/docs/errors#not_found`,
      request_id: missing.headers["x-request-id"],
    });
  });

  it("answers an unknown path with 404 before looking at the key", async () => {
    const res = await gw.http().post("/v1/lookups").set("Authorization", "Bearer nonsense");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  it("answers a known path with a wrong method with 405 and Allow", async () => {
    const res = await gw.http().delete("/v1/lookup");
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe("POST");
    expect(res.body.error.code).toBe("method_not_allowed");
  });

  it("refuses malformed JSON without echoing it", async () => {
    const { key } = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const res = await gw.http().post("/v1/lookup").set(bearer(key)).set("Content-Type", "application/json").send('{"numbers": ["+12025550100"');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    expect(JSON.stringify(res.body)).not.toContain("12025550100");
  });

  it("answers a path parameter that is not valid percent-encoding with 400, not a retryable 500", async () => {
    for (const path of ["/v1/lookups/%E0%A4%A", "/v1/jobs/%ZZ"]) {
      const res = await gw.http().get(path);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request", retryable: false, param: null });
      expect(res.body.error.message).not.toContain("%");
    }
  });

  it("answers a body that does not decompress with 400 invalid_request", async () => {
    const { key } = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const res = await gw.http().post("/v1/lookup").set(bearer(key)).set("Content-Type", "application/json").set("Content-Encoding", "gzip").send("not gzip at all");
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", retryable: false });
  });

  describe("input Postgres could not store, or nested past any schema, is 400 invalid_request (never a 500)", () => {
    let key: string;
    beforeAll(async () => {
      key = (await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: [...DEFAULT_SCOPES, "webhooks:manage"] })).key;
    });
    const expect400 = (res: { status: number; body: { error?: { code: string; message: string } } }) => {
      expect(res.status).toBe(400);
      expect(res.body.error?.code).toBe("invalid_request");
    };

    it.each([
      ["a NUL in a number", { numbers: ["+1202555\u00000100"], checks: ["spam"] }],
      ["a lone surrogate in a number", { numbers: ["+12025550100\ud800"], checks: ["spam"] }],
      ["a NUL in webhook_endpoint_id", { numbers: ["+12025550100"], checks: ["spam"], webhook_endpoint_id: "we_\u0000" }],
    ])("%s", async (_name, body) => {
      expect400(await gw.http().post("/v1/lookup").set(bearer(key)).set("Content-Type", "application/json").send(JSON.stringify(body)));
    });

    it("a NUL in a path id or a query value", async () => {
      expect400(await gw.http().patch("/v1/webhook_endpoints/we_%00").set(bearer(key)).send({ events: ["lookup.completed"] }));
      expect400(await gw.http().get("/v1/jobs/job_x/results?status=%00").set(bearer(key)));
    });

    it("JSON nested 200,000 deep, with an Idempotency-Key", async () => {
      const deep = `{"numbers":${"[".repeat(200_000)}${"]".repeat(200_000)},"checks":["spam"]}`;
      expect400(await gw.http().post("/v1/lookup").set(bearer(key)).set("Idempotency-Key", "deep").set("Content-Type", "application/json").send(deep));
      expect((await gw.http().get("/v1/health")).status).toBe(200);
    });
  });

  it("refuses a body declared over the limit at once, without waiting for it", async () => {
    const { key } = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const url = new URL(gw.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        // 10 GB announced, 10 bytes sent, and the connection held open.
        socket.write(`POST /v1/lookup HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n{"numbers"`);
      });
      let got = "";
      socket.on("data", (d) => {
        got += d.toString();
        if (got.includes('"request_id"')) socket.destroy();
      });
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      setTimeout(() => (socket.destroy(), resolve(got)), 3_000);
    });
    expect(answer).toMatch(/^HTTP\/1.1 413/);
    expect(answer).toContain('"code":"payload_too_large"');
  });

  it("answers headers too large for Node with the standard error object", async () => {
    const res = await gw.http().get("/v1/health").set("X-Padding", "x".repeat(20_000));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_request", retryable: false });
    expect(res.headers["x-request-id"]).toMatch(/^req_/);
  });
});
