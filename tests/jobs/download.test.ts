import { setAccountCheck } from "@svc/store";
import type { TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { TEST, allPages, emailsList, expectError, jobsApi, parseCsv, usNumbers, type JobsApi, type Row } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
let owner: TestKey;
let job: string;
let rows: Row[];

const CHECKS = ["spam", "whatsapp", "carrier", "signal.registered", "email"];

/** The spec's column order: the primary check's columns, then per service its status, registered, attributes (catalog order), billed. */
const HEADER = [
  "row_no", "input_masked", "e164", "country", "number_status", "service", "status", "registered", "business", "checked_at", "cached", "billed", "kind", "email", "email_status",
  "number.spam.status", "number.spam.registered",
  "number.spam.risk_level", "number.spam.risk_score", "number.spam.reason_regulator", "number.spam.reason_government", "number.spam.reason_community", "number.spam.reason_unassigned",
  "number.spam.voip_range", "number.spam.top_category", "number.spam.first_seen", "number.spam.last_seen", "number.spam.sources",
  "number.spam.billed",
  "whatsapp.status", "whatsapp.registered", "whatsapp.business", "whatsapp.billed",
  "carrier.status", "carrier.registered", "carrier.line_type", "carrier.carrier", "carrier.country", "carrier.carrier_source", "carrier.billed",
  "signal.registered.status", "signal.registered.registered", "signal.registered.billed",
  "email.status", "email.registered", "email.catch_all", "email.disposable", "email.mx_found", "email.role_account", "email.free_provider", "email.did_you_mean", "email.billed",
];

beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
  owner = await api.newKey();
  const created = await api.create(owner.key, {
    numbers: [TEST.scam, TEST.clean, "+1 (202) 555-0102", TEST.invalid, TEST.suppressed, TEST.australia, "+12025550101"],
    emails: [TEST.deliverable, TEST.catchall, TEST.unknownMail],
    checks: CHECKS,
  });
  expect(created.status).toBe(201);
  job = created.body.id;
  rows = (await allPages(api, owner.key, job)).rows;
});
afterAll(async () => gw.close());

const reader = async () => (await api.newKey({ accountId: owner.accountId })).key;
const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));

/** Downloads a file as text (supertest buffers unknown media types). */
async function fetchFile(key: string, id: string, format: string) {
  const res = await api.download(key, id, { format }).buffer(true).parse((r, done) => {
    let data = "";
    r.setEncoding("utf8");
    r.on("data", (chunk: string) => (data += chunk));
    r.on("end", () => done(null, data));
  });
  return { res, body: res.body as string };
}

describe("GET /v1/jobs/{id}/download?format=csv", () => {
  it("streams an attachment whose header has exactly the spec's columns in order", async () => {
    const { res, body } = await fetchFile(await reader(), job, "csv");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    expect(res.headers["content-disposition"]).toMatch(/^attachment(;|$)/);
    expect(res.headers["content-disposition"]).toContain(`${job}.csv`);
    const [header] = parseCsv(body);
    expect(header).toEqual(HEADER);
  });

  it("has one line per row, in input order (numbers, then e-mails), matching the results", async () => {
    const { body } = await fetchFile(await reader(), job, "csv");
    expect(body.endsWith("\r\n")).toBe(true);
    const [header, ...lines] = parseCsv(body);
    expect(lines).toHaveLength(10);
    const col = (line: string[], name: string) => line[(header as string[]).indexOf(name)];
    lines.forEach((line, i) => {
      const row = rows[i] as Row;
      expect(line).toHaveLength(HEADER.length);
      expect([col(line, "row_no"), col(line, "kind"), col(line, "e164"), col(line, "email")]).toEqual([String(i + 1), row.kind, text(row.e164), text(row.email)]);
      expect([col(line, "country"), col(line, "number_status"), col(line, "email_status")]).toEqual([text(row.country), text(row.number_status), text(row.email_status)]);
      // The primary check is the first requested check of the row's kind.
      const primary = row.checks[0];
      expect(col(line, "service")).toBe(row.kind === "number" ? "number.spam" : "email");
      expect([col(line, "status"), col(line, "registered"), col(line, "checked_at"), col(line, "cached"), col(line, "billed")]).toEqual([
        primary?.status, text(primary?.registered), text(primary?.checked_at), text(primary?.cached), text(primary?.billed),
      ]);
      // Per service: the row's own checks filled in, the other kind's left empty.
      for (const service of ["number.spam", "whatsapp", "carrier", "signal.registered", "email"]) {
        const check = row.checks.find((c) => c.service === service);
        for (const name of HEADER.filter((h) => h.startsWith(`${service}.`))) {
          const field = name.slice(service.length + 1);
          const expected = !check ? "" : field === "status" ? check.status : field === "registered" ? text(check.registered) : field === "billed" ? text(check.billed) : text(check.attributes?.[field]);
          expect({ row: i + 1, name, value: col(line, name) }).toEqual({ row: i + 1, name, value: expected });
        }
      }
    });
  });

  it("writes the documented answers into their columns", async () => {
    const { body } = await fetchFile(await reader(), job, "csv");
    const [header, ...lines] = parseCsv(body);
    const pick = (line: string[] | undefined, names: string[]) => Object.fromEntries(names.map((n) => [n, line?.[(header as string[]).indexOf(n)]]));
    expect(pick(lines[0], ["e164", "country", "status", "registered", "business", "kind", "number.spam.risk_level", "number.spam.risk_score", "number.spam.reason_regulator", "number.spam.top_category", "whatsapp.registered", "carrier.line_type", "email.status"])).toEqual({
      e164: TEST.scam, country: "US", status: "ok", registered: "true", business: "", kind: "number",
      "number.spam.risk_level": "high", "number.spam.risk_score": "94", "number.spam.reason_regulator": "true", "number.spam.top_category": "impersonation",
      "whatsapp.registered": "false", "carrier.line_type": "voip", "email.status": "",
    });
    expect(pick(lines[2], ["whatsapp.registered", "whatsapp.business"])).toEqual({ "whatsapp.registered": "true", "whatsapp.business": "true" });
    expect(pick(lines[3], ["number_status", "status", "number.spam.status", "whatsapp.status", "checked_at"])).toEqual({ number_status: "invalid", status: "invalid", "number.spam.status": "invalid", "whatsapp.status": "invalid", checked_at: "" });
    expect(pick(lines[4], ["number_status", "status"])).toEqual({ number_status: "suppressed", status: "suppressed" });
    expect(pick(lines[5], ["number.spam.status", "whatsapp.registered"])).toEqual({ "number.spam.status": "unsupported_country", "whatsapp.registered": "true" });
    expect(pick(lines[6], ["number_status", "status"])).toEqual({ number_status: "duplicate", status: "duplicate" });
    expect(pick(lines[8], ["kind", "service", "email", "status", "registered", "email.catch_all", "number.spam.status", "e164"])).toEqual({
      kind: "email", service: "email", email: TEST.catchall, status: "ok", registered: "", "email.catch_all": "true", "number.spam.status": "", e164: "",
    });
  });

  it("neutralises cells a spreadsheet would run as a formula, but keeps E.164 numbers as they are", async () => {
    const key = await reader();
    const created = await api.create(key, {
      numbers: ["=1+2", "+1 (202) 555-0100", "@SUM(A1)", "-2+3", TEST.scam, '=HYPERLINK("http://x.example","click")', '12"34,56', "=1\n+2"],
      emails: ["=cmd@x.example", "+cmd@x.example", "plain@x.example"],
      checks: ["spam", "email"],
    });
    expect(created.status).toBe(201);
    const { body } = await fetchFile(key, created.body.id, "csv");
    const [header, ...lines] = parseCsv(body);
    const pick = (name: string) => lines.map((line) => line[(header as string[]).indexOf(name)]);
    // Masked inputs keep a number's + and - and an address's first character, so a leading =, +, - or @ can
    // survive masking and must be defused; in a "number", anything but digits and phone punctuation is masked.
    expect(pick("input_masked")).toEqual([
      "**+*", "'+1 (20*) ***-**00", "****(**)", "'-*+*", "'+120******01", "**********(******//*.****************)", "********", "**\n+*",
      "'=***@x.example", "'+***@x.example", "p***@x.example",
    ]);
    expect(pick("e164")).toEqual(["", TEST.clean, "", "", TEST.scam, "", "", "", "", "", ""]);
    expect(pick("email")).toEqual(["", "", "", "", "", "", "", "", "'=cmd@x.example", "'+cmd@x.example", "plain@x.example"]);
    for (const line of lines) for (const cell of line) expect(cell).not.toMatch(/^[=+\-@\t\r](?![0-9]+$)/);
  });

  it("writes the bytes of RFC 4180 with CRLF: a field quoted only when it holds a quote, comma, CR or LF", async () => {
    const key = await reader();
    const created = await api.create(key, { numbers: [TEST.scam, "=1\n+2", '12"34,56', TEST.clean], emails: ["=cmd@x.example", '"a"@x.example', "b@x,y.example", TEST.deliverable], checks: CHECKS });
    expect(created.status).toBe(201);
    const { body } = await fetchFile(key, created.body.id, "csv");
    // Parsed, then written again the one canonical way: the same bytes, so no field is quoted that need not be.
    const canonical = (cells: string[]) => `${cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(",")}\r\n`;
    const lines = parseCsv(body);
    expect(body).toBe(lines.map(canonical).join(""));
    expect(body.startsWith(`${HEADER.join(",")}\r\n`)).toBe(true);
    // What needs quotes here: masked inputs with a line break, a quote, a comma.
    expect(body).toContain(',"**\n+*",');
    expect(body).toContain(',"""***@x.example",');
    expect(body).toContain(',"b***@x,y.example",');
    expect(body).toContain(",'=***@x.example,");
  });

  it("streams large jobs completely, every row once in order", async () => {
    const key = await reader();
    const created = await api.create(key, { numbers: usNumbers(2_600), emails: emailsList(150), checks: ["carrier", "email"] });
    expect(created.status).toBe(201);
    const { body } = await fetchFile(key, created.body.id, "csv");
    const [, ...lines] = parseCsv(body);
    expect(lines.map((l) => Number(l[0]))).toEqual(Array.from({ length: 2_750 }, (_, i) => i + 1));
    expect(lines[2_599]?.[12]).toBe("number");
    expect(lines[2_600]?.[12]).toBe("email");
    const nd = await fetchFile(key, created.body.id, "ndjson");
    expect(nd.body.trimEnd().split("\n")).toHaveLength(2_750);
  });

  it("names an attribute that would clash with a service column <service>.attr_<name> (number.hlr's status)", async () => {
    const own = await api.newKey();
    await setAccountCheck(gw.store.pool, { accountId: own.accountId, checkCode: "number.hlr", enabled: true });
    const created = await api.create(own.key, { numbers: [TEST.clean, TEST.unassigned], checks: ["hlr"] });
    expect(created.status).toBe(201);
    const { body } = await fetchFile(own.key, created.body.id, "csv");
    const [header, ...lines] = parseCsv(body);
    expect(header?.slice(15)).toEqual([
      "number.hlr.status", "number.hlr.registered", "number.hlr.attr_status", "number.hlr.ported", "number.hlr.roaming", "number.hlr.network", "number.hlr.mcc_mnc", "number.hlr.country", "number.hlr.billed",
    ]);
    expect(lines.map((l) => [l[15], l[17]])).toEqual([["ok", "reachable"], ["ok", "invalid"]]);
  });
});

describe("GET /v1/jobs/{id}/download?format=ndjson", () => {
  it("streams one result item per line, the same shape as GET results", async () => {
    const { res, body } = await fetchFile(await reader(), job, "ndjson");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/x-ndjson/);
    expect(res.headers["content-disposition"]).toMatch(/^attachment(;|$)/);
    expect(res.headers["content-disposition"]).toContain(`${job}.ndjson`);
    expect(body.endsWith("\n")).toBe(true);
    const items = body.trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(items).toEqual(rows);
    for (const item of items) expect(Object.keys(item).sort()).toEqual(Object.keys(rows[0] as Row).sort());
  });
});

describe("download refusals", () => {
  it.each([
    ["format missing", {}],
    ["format not csv or ndjson", { format: "xlsx" }],
    ["format in another case", { format: "CSV" }],
  ])("%s → 400 invalid_request, param format", async (_name, query) => {
    expectError(await api.download(await reader(), job, query), 400, "invalid_request", "format");
  });

  it("hides another account's job", async () => {
    const stranger = await api.newKey();
    expectError(await api.download(stranger.key, job, { format: "csv" }), 404, "not_found");
  });
});
