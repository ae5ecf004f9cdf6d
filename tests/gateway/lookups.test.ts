import { newId } from "@svc/domain";
import { listEvents } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

let gw: TestGateway;
let k: TestKey;
beforeAll(async () => {
  gw = await startTestGateway();
  k = await accountWithKey(gw.store, gw.env.keyHashSecret);
});
afterAll(async () => gw.close());

const post = (body: unknown, key = k.key) => gw.http().post("/v1/lookup").set(bearer(key)).send(body as object);
const get = (id: string, query = "", key = k.key) => gw.http().get(`/v1/lookups/${id}${query}`).set(bearer(key));

describe("test-mode lookups", () => {
  it("runs every check for every identifier of its type, numbers first, per-row problems in rows", async () => {
    const res = await post({
      emails: ["Deliverable@EXAMPLE.com", "not-an-address", "deliverable@example.com"],
      numbers: ["+1 (202) 555-0101", "garbage", "+12025550101", "+12025550106", "+61491570156"],
      checks: ["email", "spam", "whatsapp"],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "lookup", status: "completed", livemode: false, checks: ["email", "number.spam", "whatsapp"] });
    expect(res.body.id).toMatch(/^lkp_/);
    const rows = res.body.results;
    expect(rows.map((r: { row_no: number; kind: string }) => [r.row_no, r.kind])).toEqual([
      [1, "number"], [2, "number"], [3, "number"], [4, "number"], [5, "number"], [6, "email"], [7, "email"], [8, "email"],
    ]);
    expect(rows.map((r: { number_status: string; email_status: string }) => r.number_status ?? r.email_status)).toEqual([
      "valid", "invalid", "duplicate", "suppressed", "valid", "valid", "invalid", "duplicate",
    ]);
    // Phone rows carry only phone checks, e-mail rows only the e-mail check, in request order.
    expect(rows[0].checks.map((c: { service: string }) => c.service)).toEqual(["number.spam", "whatsapp"]);
    expect(rows[5].checks.map((c: { service: string }) => c.service)).toEqual(["email"]);
    expect(rows[0]).toMatchObject({ input: "+1 (202) 555-0101", e164: "+12025550101", country: "US" });
    expect(rows[0].checks[0]).toMatchObject({ status: "ok", registered: true, billed: false, cached: false, attributes: { risk_level: "high", sources: 3 } });
    expect(rows[1].checks.every((c: { status: string }) => c.status === "invalid")).toBe(true);
    expect(rows[2].checks.every((c: { status: string }) => c.status === "duplicate")).toBe(true);
    expect(rows[3].checks.every((c: { status: string }) => c.status === "suppressed")).toBe(true);
    expect(rows[4].checks[0]).toMatchObject({ service: "number.spam", status: "unsupported_country", billed: false });
    expect(rows[5]).toMatchObject({ email: "Deliverable@example.com", email_status: "valid" });
    expect(rows[5].checks[0]).toMatchObject({ status: "ok", registered: true });
    expect(res.body.summary).toEqual({ total: 8, registered: expect.any(Number), not_registered: expect.any(Number), unknown: expect.any(Number) });
  });

  it("gives any valid identifier the same deterministic answer every time", async () => {
    const body = { numbers: ["+12125550199", "+4915123456789"], emails: ["someone@corp.example"], checks: ["spam", "whatsapp", "carrier", "email"] };
    const a = await post(body);
    const b = await post(body);
    const strip = (r: { body: { results: Array<{ checks: Array<Record<string, unknown>> }> } }) =>
      r.body.results.map((row) => row.checks.map(({ checked_at, ...rest }) => rest));
    expect(strip(a)).toEqual(strip(b));
    expect(a.body.results[1].checks[2].attributes).toMatchObject({ line_type: "mobile", country: "DE" });
  });

  it("masks input on later reads but returns e164 and email", async () => {
    const created = await post({ numbers: ["+1 202 555 0102"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    expect(created.body.results[0].input).toBe("+1 202 555 0102");
    const read = await get(created.body.id);
    expect(read.status).toBe(200);
    expect(read.body.results[0]).toMatchObject({ input: "+1 20* *** **02", e164: "+12025550102" });
    expect(read.body.results[1]).toMatchObject({ input: "d***@example.com", email: "deliverable@example.com" });
    expect(read.body.results[0].checks).toEqual(created.body.results[0].checks);
  });

  it("returns a pending lookup with Location and poll_url, which completes when polled", async () => {
    const created = await post({ numbers: ["+12025550107", "+12025550101"], checks: ["spam"], wait: 0 });
    expect(created.status).toBe(202);
    expect(created.body.status).toBe("pending");
    const pollUrl = `${gw.url}/v1/lookups/${created.body.id}`;
    expect(created.headers.location).toBe(pollUrl);
    expect(created.body.next).toEqual({ poll_url: pollUrl });
    expect(created.body.results[0].checks[0]).toMatchObject({ status: "pending", registered: null });
    expect(created.body.results[1].checks[0]).toMatchObject({ status: "ok" });

    const early = await get(created.body.id, "?wait=0");
    expect(early.body.status).toBe("pending");

    const started = Date.now();
    const done = await get(created.body.id, "?wait=10");
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe("completed");
    expect(done.body.next).toBeUndefined();
    expect(done.body.results[0].checks[0]).toMatchObject({ status: "ok", registered: false, attributes: { risk_level: "no_reports" } });
  });

  it("holds POST for its wait and answers 200 when the answers arrive in time", async () => {
    const res = await post({ emails: ["pending@example.com"], checks: ["email"], wait: 8 });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("completed");
    expect(res.body.results[0].input).toBe("pending@example.com");
  });

  it("records lookup.completed for the named endpoint only when the lookup was answered pending", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const endpointId = newId("webhookEndpoint");
    await gw.store.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ($1, $2, false, 'https://hooks.example.com/x', '{lookup.completed}', 'active', '\\x00')`,
      [endpointId, own.accountId],
    );
    const created = await post({ numbers: ["+12025550107"], emails: ["deliverable@example.com"], checks: ["spam", "email"], wait: 0, webhook_endpoint_id: endpointId }, own.key);
    expect(created.status).toBe(202);
    expect(created.body.webhook_endpoint_id).toBe(endpointId);
    await get(created.body.id, "?wait=10", own.key);
    const events = await listEvents(gw.store.pool, own.accountId, "lookup.completed");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ endpoint_id: endpointId, livemode: false });
    expect(events[0]?.data).toEqual({
      object: "lookup",
      id: created.body.id,
      status: "completed",
      livemode: false,
      summary: { total: 2, registered: 1, not_registered: 1, unknown: 0 },
    });
    expect(JSON.stringify(events[0]?.data)).not.toMatch(/12025550107|@example\.com/);

    const inTime = await post({ numbers: ["+12025550107"], checks: ["spam"], wait: 8, webhook_endpoint_id: endpointId }, own.key);
    expect(inTime.status).toBe(200);
    expect(await listEvents(gw.store.pool, own.accountId, "lookup.completed")).toHaveLength(1);
  });

  it("answers 503 temporarily_unavailable for the documented outage value and stores nothing", async () => {
    const own = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const res = await post({ numbers: ["+12025550108"], checks: ["spam"] }, own.key);
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: "temporarily_unavailable", retryable: true });
    expect(res.headers["retry-after"]).toBe("5");
    const { rows } = await gw.store.pool.query(`SELECT count(*)::int AS n FROM lookups WHERE account_id = $1`, [own.accountId]);
    expect(rows[0].n).toBe(0);
  });

  it("hides lookups of other accounts, of the other mode, and past retention", async () => {
    const created = await post({ numbers: ["+12025550100"], checks: ["spam"] });
    const stranger = await accountWithKey(gw.store, gw.env.keyHashSecret);
    expect((await get(created.body.id, "", stranger.key)).status).toBe(404);
    const liveSameAccount = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "live", accountId: k.accountId });
    expect((await get(created.body.id, "", liveSameAccount.key)).status).toBe(404);
    const sibling = await accountWithKey(gw.store, gw.env.keyHashSecret, { accountId: k.accountId });
    expect((await get(created.body.id, "", sibling.key)).status).toBe(200);
    expect((await get("lkp_doesNotExist000000")).status).toBe(404);
    expect((await get("not-an-id")).status).toBe(404);

    gw.setNow(new Date(Date.now() + 31 * 86_400_000));
    try {
      const expired = await get(created.body.id);
      expect(expired.status).toBe(404);
      expect(expired.body.error.code).toBe("not_found");
    } finally {
      gw.setNow(null);
    }
  });

  it("refuses wait outside 0-30 on GET", async () => {
    const created = await post({ numbers: ["+12025550100"], checks: ["spam"] });
    const res = await get(created.body.id, "?wait=31");
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("wait");
  });
});
