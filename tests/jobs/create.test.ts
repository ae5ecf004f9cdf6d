import { newId } from "@svc/domain";
import { listEvents } from "@svc/store";
import { bearer } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { PUBLIC_SANDBOX_KEY, TEST, allPages, answerOf, balanceOf, emailsList, expectConforms, expectError, jobsApi, storedFor, usNumbers, type JobsApi, type Row } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

const zero = { amount: "0.00", currency: "USD" };

/** An active test-mode webhook endpoint of the account, stored directly. */
async function activeEndpoint(accountId: string, livemode = false): Promise<string> {
  const id = newId("webhookEndpoint");
  await gw.store.pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ($1, $2, $3, 'https://hooks.example.com/jobs', '{job.completed,job.progress}', 'active', '\\x00')`,
    [id, accountId, livemode],
  );
  return id;
}

describe("POST /v1/jobs (JSON) with a test key", () => {
  it("answers 201 with Location and the completed job, its exact progress, zero cost and the estimate", async () => {
    const k = await api.newKey();
    const before = await balanceOf(gw, k.accountId);
    const res = await api.create(k.key, {
      numbers: [TEST.clean, "+1 202 555 0100", "garbage", TEST.suppressed, TEST.australia],
      emails: [TEST.deliverable, "not-an-address", TEST.unknownMail],
      checks: ["spam", "email", "whatsapp"],
    });
    expect(res.status).toBe(201);
    const id = res.body.id as string;
    expect(id).toMatch(/^job_/);
    expect(res.headers.location).toBe(`${gw.url}/v1/jobs/${id}`);
    expect(res.body).toMatchObject({
      object: "job",
      status: "completed",
      livemode: false,
      checks: ["number.spam", "email", "whatsapp"],
      // 5 numbers × 2 phone checks + 3 e-mails × 1 e-mail check; all done, none billed.
      progress: { total: 8, checks_total: 13, done: 13, conclusive: 0, non_billable: 13 },
      cost: { reserved: zero, charged: zero },
      max_cost: null,
      webhook_endpoint_id: null,
      purged_at: null,
      failure: null,
      results_url: `${gw.url}/v1/jobs/${id}/results`,
    });
    expect(res.body.finished_at).toEqual(expect.any(String));
    expect(new Date(res.body.finished_at).getTime()).toBeGreaterThanOrEqual(new Date(res.body.created_at).getTime());
    expect(res.body.estimate).toMatchObject({
      object: "estimate",
      livemode: false,
      rows: { total: 8, valid: 5, invalid: 2, duplicate: 1 },
      numbers: { total: 5, valid: 3, invalid: 1, duplicate: 1 },
      emails: { total: 3, valid: 2, invalid: 1, duplicate: 0 },
      checks_total: 13,
      max_cost: zero,
    });

    expectConforms("job", res.body);
    // The estimate in the response is the one POST /v1/jobs/estimate gives for the same body.
    const estimate = await api.estimate(k.key, { numbers: [TEST.clean, "+1 202 555 0100", "garbage", TEST.suppressed, TEST.australia], emails: [TEST.deliverable, "not-an-address", TEST.unknownMail], checks: ["spam", "email", "whatsapp"] });
    expect(res.body.estimate).toEqual(estimate.body);

    // The estimate is only in the creating response; everything else reads back the same.
    const read = await api.get(k.key, id);
    expectConforms("job", read.body);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("estimate");
    const { estimate: _estimate, ...created } = res.body;
    expect(read.body).toEqual(created);

    expect(await balanceOf(gw, k.accountId)).toEqual(before);
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 1, rows: 8, chunks: 0, reservations: 0 });
  });

  it("stores every row with every check of its type, numbers first, in input order", async () => {
    const k = await api.newKey();
    const created = await api.create(k.key, { emails: [TEST.undeliverable, TEST.catchall], numbers: [TEST.scam, TEST.invalid], checks: ["email", "carrier", "signal.registered"] });
    expect(created.status).toBe(201);
    const { rows } = await allPages(api, k.key, created.body.id);
    expect(rows.map((r) => [r.row_no, r.kind, r.e164 ?? r.email, r.checks.map((c) => c.service)])).toEqual([
      [1, "number", TEST.scam, ["carrier", "signal.registered"]],
      [2, "number", null, ["carrier", "signal.registered"]],
      [3, "email", TEST.undeliverable, ["email"]],
      [4, "email", TEST.catchall, ["email"]],
    ]);
    expect(rows[0]?.checks).toEqual([
      expect.objectContaining({ service: "carrier", status: "ok", registered: null, attributes: { line_type: "voip", carrier: "Test VoIP", country: "US", carrier_source: "allocation" }, billed: false, cached: false }),
      expect.objectContaining({ service: "signal.registered", status: "ok", registered: false, billed: false }),
    ]);
    expect(rows[1]?.checks.map((c) => c.status)).toEqual(["invalid", "invalid"]);
    expect(rows[3]?.checks[0]).toMatchObject({ status: "ok", registered: null, attributes: { catch_all: true } });
  });

  it("answers pending test values at once: the job is final in the response", async () => {
    const k = await api.newKey();
    const res = await api.create(k.key, { numbers: [TEST.slow, "+12025550109"], emails: [TEST.pendingMail], checks: ["spam", "email"] });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("completed");
    const { rows } = await allPages(api, k.key, res.body.id);
    expect(rows.map((r) => [r.checks[0]?.status, r.checks[0]?.registered])).toEqual([
      ["ok", false],
      ["ok", false],
      ["ok", true],
    ]);
  });

  it("reads a documented outage value as a source that could not answer: every check unknown, free", async () => {
    const k = await api.newKey();
    const res = await api.create(k.key, { numbers: [TEST.outage, TEST.scam], emails: [TEST.outageMail], checks: ["spam", "whatsapp", "email"] });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("completed");
    const { rows } = await allPages(api, k.key, res.body.id);
    expect(rows[0]?.number_status).toBe("valid");
    for (const row of [rows[0], rows[2]]) {
      for (const c of row?.checks ?? []) expect(c).toMatchObject({ status: "unknown", registered: null, attributes: null, billed: false });
    }
    expect(rows[1]?.checks[0]).toMatchObject({ status: "ok", attributes: { risk_level: "high" } });
  });

  it("gives the same answers as POST /v1/lookup for the same identifiers (deterministic test data)", async () => {
    const k = await api.newKey();
    const body = {
      numbers: [TEST.clean, TEST.scam, TEST.telemarketer, TEST.unassigned, TEST.allUnknown, TEST.suppressed, TEST.canada, TEST.germany, TEST.australia, TEST.invalid, "+12125550199", "+4915123456789", "+447700900123", "+1 212 555 0199", ...usNumbers(30, 500)],
      emails: [TEST.deliverable, TEST.disposable, TEST.catchall, TEST.invalidMail, "someone@corp.example", "Someone@CORP.example", ...emailsList(20, "mail.example")],
      checks: ["spam", "whatsapp", "carrier", "email"],
    };
    const lookup = await gw.http().post("/v1/lookup").set(bearer(k.key)).send(body);
    expect(lookup.status).toBe(200);
    const job = await api.create(k.key, body);
    expect(job.status).toBe(201);
    const { rows } = await allPages(api, k.key, job.body.id);
    const shape = (r: Row) => ({ row_no: r.row_no, kind: r.kind, e164: r.e164, country: r.country, number_status: r.number_status, email: r.email, email_status: r.email_status, checks: r.checks.map(answerOf) });
    expect(rows).toHaveLength(body.numbers.length + body.emails.length);
    expect(rows.map(shape)).toEqual((lookup.body.results as Row[]).map(shape));
    // Results are later reads: the input is masked there.
    expect(rows[10]?.input).toBe("+121******99");
  });

  it("takes max_cost (free in test mode), progress_events and a verified test-mode webhook endpoint; sends no job.completed", async () => {
    const k = await api.newKey();
    const endpoint = await activeEndpoint(k.accountId);
    const res = await api.create(k.key, { numbers: [TEST.clean], checks: ["spam"], max_cost: { amount: 0 }, progress_events: true, webhook_endpoint_id: endpoint });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "completed", max_cost: zero, progress_events: true, webhook_endpoint_id: endpoint });
    expect(await listEvents(gw.store.pool, k.accountId)).toEqual([]);

    const liveEndpoint = await activeEndpoint(k.accountId, true);
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["spam"], webhook_endpoint_id: liveEndpoint }), 400, "invalid_request", "webhook_endpoint_id");
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["spam"], max_cost: { amount: "1.2.3" } }), 400, "invalid_request", "max_cost.amount");
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["spam"], max_cost: { amount: "-1.00" } }), 400, "invalid_request", "max_cost.amount");
  });
});

describe("POST /v1/jobs refusals", () => {
  it("validates like the estimate, with param", async () => {
    const k = await api.newKey();
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["spam", "telepathy"] }), 400, "invalid_request", "checks[1]");
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["email"] }), 400, "invalid_request", "checks");
    expectError(await api.create(k.key, { emails: [TEST.deliverable], checks: ["whatsapp"] }), 400, "invalid_request", "checks");
    expectError(await api.create(k.key, { checks: ["spam"] }), 400, "invalid_request", "numbers");
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["spam"], wait: 1 }), 400, "invalid_request", "wait");
    expectError(await api.create(k.key, { numbers: [TEST.clean], checks: ["hlr"] }), 403, "service_disabled", "checks[0]");
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0, rows: 0 });
  });

  it("refuses 50,001 identifiers, more than 100,000 identifier × checks, and bodies over 4 MB", async () => {
    const k = await api.newKey();
    expectError(await api.create(k.key, { numbers: usNumbers(30_000), emails: emailsList(20_001), checks: ["spam", "email"] }), 400, "too_many_numbers", null);
    expectError(await api.create(k.key, { numbers: usNumbers(40_000), checks: ["spam", "whatsapp", "carrier"] }), 400, "invalid_request", "checks");
    const padded = { emails: Array.from({ length: 4_300 }, (_, i) => `${i}${"y".repeat(990)}@pad.example`), checks: ["email"] };
    expectError(await api.create(k.key, padded), 413, "payload_too_large", null);
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0, rows: 0 });
  });

  it("needs jobs:write", async () => {
    const reader = await api.newKey({ scopes: ["jobs:read", "jobs:read_all"] });
    expectError(await api.create(reader.key, { numbers: [TEST.clean], checks: ["spam"] }), 403, "insufficient_scope");
  });
});

describe("test-mode usage", () => {
  it("counts a test job's identifiers and checks in today's figures and usage, like test lookups", async () => {
    const k = await api.newKey();
    const created = await api.create(k.key, { numbers: [TEST.clean, TEST.scam, "garbage"], checks: ["spam", "whatsapp"] });
    expect(created.status).toBe(201);
    const account = await gw.http().get("/v1/account").set(bearer(k.key));
    expect(account.body.today).toMatchObject({ identifiers: 3, checks: 6 });
    const day = new Date().toISOString().slice(0, 10);
    const usage = await gw.http().get(`/v1/usage?from=${day}&to=${day}&group_by=check`).set(bearer(k.key));
    expect(usage.body.data.map((r: { service: string; checks: number }) => [r.service, r.checks])).toEqual([
      ["number.spam", 3],
      ["whatsapp", 3],
    ]);
  });
});

describe("Idempotency-Key on POST /v1/jobs", () => {
  it("replays the job for the same key and body, and refuses the key with another body", async () => {
    const k = await api.newKey();
    const body = { numbers: [TEST.scam, TEST.clean], emails: [TEST.deliverable], checks: ["spam", "email"] };
    const first = await api.create(k.key, body, "import-2026-11-21");
    expect(first.status).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();

    // The same body with other key order is the same body.
    const again = await api.create(k.key, { checks: ["spam", "email"], emails: [TEST.deliverable], numbers: [TEST.scam, TEST.clean] }, "import-2026-11-21");
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);

    const other = await api.create(k.key, { ...body, numbers: [TEST.scam] }, "import-2026-11-21");
    expectError(other, 409, "idempotency_key_reused");
    expect(other.body.error.retryable).toBe(false);
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 1, rows: 3 });

    // A new key is a new job.
    const fresh = await api.create(k.key, body, "import-2026-11-22");
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(first.body.id);
  });

  it("creates one job under concurrent duplicates (within the key's burst of 20)", async () => {
    const k = await api.newKey();
    const body = { numbers: usNumbers(500, 9_000), emails: emailsList(100), checks: ["spam", "whatsapp", "email"] };
    const responses = await Promise.all(Array.from({ length: 12 }, () => api.create(k.key, body, "concurrent")));
    const created = responses.filter((r) => r.status === 201);
    const busy = responses.filter((r) => r.status === 409);
    // More bulk requests than the account's share of the intake threads holds are turned away, retryably.
    const overloaded = responses.filter((r) => r.status === 503);
    expect(created.length + busy.length + overloaded.length).toBe(12);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of busy) expect(r.body.error).toMatchObject({ code: "idempotency_request_in_progress", retryable: true });
    for (const r of overloaded) {
      expect(r.body.error).toMatchObject({ code: "temporarily_unavailable", retryable: true });
      expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    }
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 1, rows: 600 });
  });
});

describe("the public sandbox key", () => {
  const ten = { numbers: [TEST.clean, TEST.scam, TEST.telemarketer, TEST.lowSpam, TEST.suppressed, TEST.canada, TEST.invalid], emails: [TEST.deliverable, TEST.catchall, TEST.invalidMail] };

  it("runs jobs of at most 10 rows of documented test values", async () => {
    const ok = await api.create(PUBLIC_SANDBOX_KEY, { ...ten, checks: ["spam", "email"] });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ status: "completed", livemode: false, progress: { total: 10, checks_total: 10, done: 10, conclusive: 0, non_billable: 10 } });
    const results = await api.results(PUBLIC_SANDBOX_KEY, ok.body.id);
    expect(results.status).toBe(200);
    expect(results.body.data).toHaveLength(10);

    expectError(await api.create(PUBLIC_SANDBOX_KEY, { ...ten, numbers: [...ten.numbers, TEST.germany], checks: ["spam", "email"] }), 400, "too_many_numbers", null);
    expectError(await api.create(PUBLIC_SANDBOX_KEY, { numbers: [TEST.clean, TEST.scam, "+12125550123"], checks: ["spam"] }), 403, "sandbox_magic_only", "numbers[2]");
    expectError(await api.create(PUBLIC_SANDBOX_KEY, { emails: [TEST.deliverable, "anyone@example.com"], checks: ["email"] }), 403, "sandbox_magic_only", "emails[1]");
  });

  it("refuses webhook_endpoint_id", async () => {
    expectError(await api.create(PUBLIC_SANDBOX_KEY, { numbers: [TEST.clean], checks: ["spam"], webhook_endpoint_id: "we_0000000000" }), 400, "invalid_request", "webhook_endpoint_id");
  });
});
