import { newId } from "@svc/domain";
import type { TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { PUBLIC_SANDBOX_KEY, TEST, allPages, emailsList, expectError, jobsApi, storedFor, usNumbers, type JobsApi, type Res } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
let k: TestKey;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
// Fresh key per test: a few requests each, and the per-key rate limit stays out of the way.
beforeEach(async () => {
  k = await api.newKey();
});
afterAll(async () => gw.close());

/** Uploads a CSV as a job with the given checks and returns the created job (expects 201). */
async function uploadJob(csv: string | Buffer, checks = "spam,email", extra: Record<string, string> = {}): Promise<Res> {
  const res = await api.upload(k.key, csv, { checks, ...extra });
  expect({ status: res.status, error: res.body.error }).toEqual({ status: 201, error: undefined });
  expect(res.body.status).toBe("completed");
  return res;
}

/** The identifiers a job was made of, as the results report them (E.164 / address; invalid rows by status). */
async function identifiersOf(jobId: string): Promise<{ numbers: Array<string | null>; emails: Array<string | null>; statuses: string[] }> {
  const { rows } = await allPages(api, k.key, jobId);
  return {
    numbers: rows.filter((r) => r.kind === "number").map((r) => r.e164),
    emails: rows.filter((r) => r.kind === "email").map((r) => r.email),
    statuses: rows.map((r) => (r.number_status ?? r.email_status) as string),
  };
}

describe("CSV upload: reading the file", () => {
  it("finds number and e-mail columns by their header, ignoring other columns", async () => {
    const csv = ["Name,Phone Number,Company,E-mail", "Ada,+12025550101,Engines,deliverable@example.com", "Bob,+1 202 555 0102,Navy,undeliverable@example.com", ""].join("\n");
    const res = await uploadJob(csv);
    expect(res.body.progress).toMatchObject({ total: 4, checks_total: 4 });
    expect(res.body.estimate.rows).toEqual({ total: 4, valid: 4, invalid: 0, duplicate: 0 });
    expect(await identifiersOf(res.body.id)).toEqual({
      numbers: [TEST.scam, TEST.telemarketer],
      emails: [TEST.deliverable, TEST.undeliverable],
      statuses: ["valid", "valid", "valid", "valid"],
    });
  });

  it("reads every number column, row by row, and the other header names", async () => {
    const csv = ["phone,mobile,email", "+12025550100,+12025550103,", "+12025550101,,catchall@example.com", ""].join("\n");
    const res = await uploadJob(csv);
    expect(await identifiersOf(res.body.id)).toMatchObject({ numbers: [TEST.clean, TEST.lowSpam, TEST.scam], emails: [TEST.catchall] });
    for (const header of ["number", "msisdn", "tel", "e164", "telephone"]) {
      const est = await api.upload(k.key, `${header}\n${TEST.clean}\n`, { checks: "spam" }, { path: "/v1/jobs/estimate" });
      expect({ header, status: est.status, numbers: est.body.numbers?.total }).toEqual({ header, status: 200, numbers: 1 });
    }
  });

  it("reads national numbers in the country of a `country` column; international ones whatever it says", async () => {
    const csv = ["number,country", "030 23125000,DE", "(202) 555-0101,us", "+61491570156,", "0301234567,", "+1 416 555 0100,DE", "0049 30 23125000,US", ""].join("\n");
    const res = await uploadJob(csv, "spam");
    expect(await identifiersOf(res.body.id)).toEqual({
      numbers: [TEST.germany, TEST.scam, TEST.australia, null, TEST.canada, TEST.germany],
      emails: [],
      statuses: ["valid", "valid", "valid", "invalid", "valid", "duplicate"],
    });
    const codeColumn = await uploadJob(["Phone;Country_Code", "(202) 555-0100;US", ""].join("\n"), "spam");
    expect((await identifiersOf(codeColumn.body.id)).numbers).toEqual([TEST.clean]);
  });

  it("without a header, treats cells holding @ as e-mails and the rest as numbers", async () => {
    const csv = [TEST.clean, TEST.deliverable, `${TEST.scam},${TEST.catchall}`, "not a number", ""].join("\n");
    const res = await uploadJob(csv);
    expect(res.body.estimate.numbers).toEqual({ total: 3, valid: 2, invalid: 1, duplicate: 0 });
    expect(await identifiersOf(res.body.id)).toEqual({
      numbers: [TEST.clean, TEST.scam, null],
      emails: [TEST.deliverable, TEST.catchall],
      statuses: ["valid", "valid", "invalid", "valid", "valid"],
    });
  });

  it("accepts a UTF-8 byte order mark before the header", async () => {
    const res = await uploadJob(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`phone,email\n${TEST.clean},${TEST.deliverable}\n`)]));
    // Without BOM handling the header would be read as data: three invalid or extra rows.
    expect(res.body.estimate.rows).toEqual({ total: 2, valid: 2, invalid: 0, duplicate: 0 });
  });

  it("reads quoted fields holding separators, quotes and line breaks", async () => {
    const csv = ['name,phone,email', '"Lovelace, Ada","+1 202 555 0101","deliverable@example.com"', '"A ""quoted""\nmulti-line note",+12025550102,', ""].join("\n");
    const res = await uploadJob(csv);
    expect(await identifiersOf(res.body.id)).toMatchObject({ numbers: [TEST.scam, TEST.telemarketer], emails: [TEST.deliverable] });
  });

  it.each([
    ["semicolons and CRLF", `phone;email\r\n${TEST.clean};${TEST.deliverable}\r\n"+1 202 555 0101";${TEST.catchall}\r\n`],
    ["tabs", `phone\temail\n${TEST.clean}\t${TEST.deliverable}\n+1 202 555 0101\t${TEST.catchall}\n`],
    ["commas and CRLF", `phone,email\r\n${TEST.clean},${TEST.deliverable}\r\n+1 202 555 0101,${TEST.catchall}\r\n`],
  ])("reads %s", async (_name, csv) => {
    const res = await uploadJob(csv);
    expect(await identifiersOf(res.body.id)).toEqual({
      numbers: [TEST.clean, TEST.scam],
      emails: [TEST.deliverable, TEST.catchall],
      statuses: ["valid", "valid", "valid", "valid"],
    });
  });

  it("skips empty cells and empty rows", async () => {
    const csv = ["phone,email", `${TEST.clean},`, ",", "", "   ,   ", `,${TEST.deliverable}`, ",", ""].join("\n");
    const res = await uploadJob(csv);
    expect(res.body.progress.total).toBe(2);
    expect(await identifiersOf(res.body.id)).toMatchObject({ numbers: [TEST.clean], emails: [TEST.deliverable] });
  });

  it("reports invalid and duplicate rows like a JSON job", async () => {
    const csv = ["phone,email", `${TEST.clean},${TEST.deliverable}`, `+1 (202) 555-0100,DELIVERABLE@example.com`, `12,not-an-address`, ""].join("\n");
    const res = await uploadJob(csv);
    expect(res.body.estimate).toMatchObject({ numbers: { total: 3, valid: 1, invalid: 1, duplicate: 1 }, emails: { total: 3, valid: 1, invalid: 1, duplicate: 1 } });
    expect((await identifiersOf(res.body.id)).statuses).toEqual(["valid", "duplicate", "invalid", "valid", "duplicate", "invalid"]);
  });
});

describe("CSV upload: form fields", () => {
  it("takes checks as a comma-separated list, and max_cost, progress_events and webhook_endpoint_id", async () => {
    const endpoint = newId("webhookEndpoint");
    await gw.store.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, status, secret_encrypted) VALUES ($1, $2, false, 'https://hooks.example.com/x', '{job.completed}', 'active', '\\x00')`,
      [endpoint, k.accountId],
    );
    const res = await uploadJob(`phone,email\n${TEST.clean},${TEST.deliverable}\n`, "spam, whatsapp,email", { max_cost: "0.50", progress_events: "true", webhook_endpoint_id: endpoint });
    expect(res.body).toMatchObject({
      checks: ["number.spam", "whatsapp", "email"],
      max_cost: { amount: "0.50", currency: "USD" },
      progress_events: true,
      webhook_endpoint_id: endpoint,
      progress: { total: 2, checks_total: 3, done: 3 },
    });
  });

  it("takes the checks part repeated", async () => {
    const res = await gw.http().post("/v1/jobs").set("Authorization", `Bearer ${k.key}`).attach("file", Buffer.from(`${TEST.clean},${TEST.deliverable}\n`), "list.csv").field("checks", "spam").field("checks", "email");
    expect(res.status).toBe(201);
    expect(res.body.checks).toEqual(["number.spam", "email"]);
  });

  it("validates the fields with the same params as JSON", async () => {
    const csv = `phone,email\n${TEST.clean},${TEST.deliverable}\n`;
    expectError(await api.upload(k.key, csv, {}), 400, "invalid_request", "checks");
    expectError(await api.upload(k.key, csv, { checks: "spam,telepathy,email" }), 400, "invalid_request", "checks[1]");
    expectError(await api.upload(k.key, csv, { checks: "spam" }), 400, "invalid_request", "checks");
    expectError(await api.upload(k.key, csv, { checks: "spam,email", max_cost: "lots" }), 400, "invalid_request", "max_cost.amount");
    expectError(await api.upload(k.key, csv, { checks: "spam,email", webhook_endpoint_id: "we_doesNotExist00" }), 400, "invalid_request", "webhook_endpoint_id");
    expectError(await api.upload(k.key, csv, { checks: "spam,email", colour: "red" }), 400, "invalid_request");
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0, rows: 0 });
  });

  it("replays an upload with the same Idempotency-Key", async () => {
    const csv = `phone\n${TEST.clean}\n${TEST.scam}\n`;
    const first = await api.upload(k.key, csv, { checks: "spam" }, { idempotencyKey: "upload-1" });
    expect(first.status).toBe(201);
    const again = await api.upload(k.key, csv, { checks: "spam" }, { idempotencyKey: "upload-1" });
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.id).toBe(first.body.id);
    expectError(await api.upload(k.key, `phone\n${TEST.clean}\n`, { checks: "spam" }, { idempotencyKey: "upload-1" }), 409, "idempotency_key_reused");
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 1 });
  });

  it("estimates an uploaded file without storing it", async () => {
    const res = await api.upload(k.key, `phone,email\n${TEST.clean},${TEST.deliverable}\n${TEST.clean},bad\n`, { checks: "spam,whatsapp,email" }, { path: "/v1/jobs/estimate" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "estimate", numbers: { total: 2, valid: 1, duplicate: 1 }, emails: { total: 2, valid: 1, invalid: 1 }, checks_total: 6 });
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0, rows: 0 });
  });
});

describe("CSV upload: refusals with param file", () => {
  const good = `phone\n${TEST.clean}\n`;

  it("refuses a form without the file part", async () => {
    const res = await gw.http().post("/v1/jobs").set("Authorization", `Bearer ${k.key}`).field("checks", "spam");
    expectError(res, 400, "invalid_request", "file");
    const asText = await gw.http().post("/v1/jobs").set("Authorization", `Bearer ${k.key}`).field("checks", "spam").field("file", good);
    expectError(asText, 400, "invalid_request", "file");
  });

  it("refuses a multipart body it cannot read", async () => {
    const noBoundary = await gw.http().post("/v1/jobs").set("Authorization", `Bearer ${k.key}`).set("Content-Type", "multipart/form-data").send("--x\r\nnot really\r\n");
    expectError(noBoundary, 400, "invalid_request", "file");
  });

  it("refuses the file in a part with another name, and a second file", async () => {
    expectError(await api.upload(k.key, good, { checks: "spam" }, { part: "upload" }), 400, "invalid_request", "file");
    const two = gw.http().post("/v1/jobs").set("Authorization", `Bearer ${k.key}`).attach("file", Buffer.from(good), "a.csv").attach("file", Buffer.from(good), "b.csv").field("checks", "spam");
    expectError(await two, 400, "invalid_request", "file");
  });

  it.each([
    ["a file that is not UTF-8 (latin-1)", Buffer.from("name,phone\nM\xfcller,+12025550100\n", "latin1")],
    ["an unclosed quote", Buffer.from(`phone,email\n"${TEST.clean},${TEST.deliverable}\n`)],
    ["a quote inside an unquoted field", Buffer.from(`phone,email\n+1202"5550100,${TEST.deliverable}\n`)],
    ["a header without number or e-mail columns", Buffer.from(`name,country\nAda,US\n`)],
    ["a header and no rows", Buffer.from(`phone,email\n`)],
    ["only empty cells", Buffer.from(`phone,email\n,\n  ,\n`)],
    ["an empty file", Buffer.alloc(0)],
  ])("refuses %s", async (_name, file) => {
    expectError(await api.upload(k.key, file, { checks: "spam,email" }), 400, "invalid_request", "file");
  });

  it("refuses more than 50,000 identifiers with too_many_numbers, and takes 50,000", async () => {
    const header = "phone,email";
    const emails = emailsList(20_000);
    const numbers = usNumbers(30_000);
    const lines = numbers.map((x, i) => `${x},${emails[i] ?? ""}`);
    const exactly = [header, ...lines].join("\n");
    // 30,000 numbers and 20,000 e-mails: exactly 50,000 (estimated, so nothing is stored).
    const ok = await api.upload(k.key, exactly, { checks: "spam,email" }, { path: "/v1/jobs/estimate" });
    expect(ok.status).toBe(200);
    expect(ok.body.rows.total).toBe(50_000);
    const over = `${exactly}\n${usNumbers(1, 40_000)[0]},\n`;
    expectError(await api.upload(k.key, over, { checks: "spam,email" }), 400, "too_many_numbers", "file");
  });

  it("refuses a file over 4 MB with 413 payload_too_large", async () => {
    const big = Buffer.from(`phone\n${`${TEST.clean}\n`.repeat(Math.ceil((4 * 1024 * 1024) / 13) + 10)}`);
    expect(big.length).toBeGreaterThan(4 * 1024 * 1024);
    const res = await api.upload(k.key, big, { checks: "spam" });
    expectError(res, 413, "payload_too_large", "file");
    expect(await storedFor(gw, k.accountId)).toMatchObject({ jobs: 0 });
  });

  describe("hostile forms get a 400 and the gateway keeps serving", () => {
    const boundary = "svc-test-boundary";
    const raw = (body: string) =>
      gw.http().post("/v1/jobs/estimate").set("Authorization", `Bearer ${PUBLIC_SANDBOX_KEY}`).set("Content-Type", `multipart/form-data; boundary=${boundary}`).send(Buffer.from(body));
    const part = (name: string, value: string, file = false) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${file ? '; filename="a.csv"\r\nContent-Type: text/csv' : ""}\r\n\r\n${value}\r\n`;

    it.each(["__proto__", "constructor", "toString"])("a field named %s", async (name) => {
      const res = await raw(`${part(name, "x")}${part("checks", "spam")}${part("file", `phone\n${TEST.clean}`, true)}--${boundary}--\r\n`);
      expectError(res, 400, "invalid_request");
      expect((await gw.http().get("/v1/health")).status).toBe(200);
    });

    it("a body cut off inside the file part", async () => {
      const res = await raw(`${part("checks", "spam")}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nphone\n+1202`);
      expectError(res, 400, "invalid_request", "file");
      expect((await gw.http().get("/v1/health")).status).toBe(200);
    });
  });

  it("holds the public sandbox key to 10 rows in a file too", async () => {
    const ten = [TEST.clean, TEST.scam, TEST.telemarketer, TEST.lowSpam, TEST.canada, TEST.germany, TEST.australia, TEST.deliverable, TEST.catchall, TEST.undeliverable];
    const ok = await api.upload(PUBLIC_SANDBOX_KEY, ten.join("\n"), { checks: "spam,email" });
    expect(ok.status).toBe(201);
    expect(ok.body.progress.total).toBe(10);
    expectError(await api.upload(PUBLIC_SANDBOX_KEY, [...ten, TEST.invalid].join("\n"), { checks: "spam,email" }), 400, "too_many_numbers");
    expectError(await api.upload(PUBLIC_SANDBOX_KEY, ten.join("\n"), { checks: "spam,email", webhook_endpoint_id: "we_0000000000" }), 400, "invalid_request", "webhook_endpoint_id");
  });
});
