import type { TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { TEST, allPages, emailsList, expectError, jobsApi, usNumbers, type JobsApi, type Row } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
let owner: TestKey;
/** 20 rows of documented values with known answers, checks spam, whatsapp, email. */
let small: string;
/** 2,345 rows (2,000 numbers, 345 e-mails), checks whatsapp, email. */
let big: string;

const SMALL = {
  numbers: [
    TEST.clean, // 1: spam ok/false, whatsapp ok/true
    TEST.scam, // 2: spam ok/true, whatsapp ok/false
    TEST.telemarketer, // 3: spam ok/true, whatsapp ok/true
    TEST.lowSpam, // 4: spam ok/true, whatsapp ok/false
    TEST.unassigned, // 5: spam ok/true, whatsapp unknown
    TEST.allUnknown, // 6: spam unknown, whatsapp unknown
    TEST.suppressed, // 7: suppressed
    TEST.australia, // 8: spam unsupported_country, whatsapp ok/true
    TEST.invalid, // 9: invalid
    "+1 202 555 0100", // 10: duplicate of 1
    TEST.germany, // 11: spam ok/false, whatsapp ok/false
    TEST.canada, // 12: spam ok/true, whatsapp ok/true
  ],
  emails: [
    TEST.deliverable, // 13: ok/true
    TEST.undeliverable, // 14: ok/false
    TEST.catchall, // 15: ok/null
    TEST.unknownMail, // 16: unknown
    TEST.suppressedMail, // 17: suppressed
    TEST.invalidMail, // 18: invalid
    "Deliverable@example.com", // 19: duplicate of 13
    TEST.disposable, // 20: ok/true
  ],
  checks: ["spam", "whatsapp", "email"],
};

beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
  owner = await api.newKey();
  const a = await api.create(owner.key, SMALL);
  expect(a.status).toBe(201);
  small = a.body.id;
  const b = await api.create(owner.key, { numbers: usNumbers(2_000), emails: emailsList(345), checks: ["whatsapp", "email"] });
  expect(b.status).toBe(201);
  big = b.body.id;
});
afterAll(async () => gw.close());

/** A fresh key on the owner's account (default scopes include jobs:read_all), so each test has its own rate limit. */
const reader = async () => (await api.newKey({ accountId: owner.accountId })).key;
const rowNos = (rows: Row[]) => rows.map((r) => r.row_no);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("GET /v1/jobs/{id}/results", () => {
  it("lists rows in input order, numbers then e-mails, each with all its checks; inputs masked", async () => {
    const key = await reader();
    const res = await api.results(key, small);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    const rows = res.body.data as Row[];
    expect(rowNos(rows)).toEqual(range(1, 20));
    expect(rows.map((r) => r.kind)).toEqual([...Array(12).fill("number"), ...Array(8).fill("email")]);
    for (const r of rows) expect(r.checks.map((c) => c.service)).toEqual(r.kind === "number" ? ["number.spam", "whatsapp"] : ["email"]);
    expect(rows[1]).toMatchObject({ input: "+120******01", e164: TEST.scam, country: "US", number_status: "valid", email: null, email_status: null });
    expect(rows[9]).toMatchObject({ input: "+1 20* *** **00", e164: TEST.clean, number_status: "duplicate" });
    expect(rows[12]).toMatchObject({ input: "d***@example.com", email: TEST.deliverable, email_status: "valid", e164: null });
    expect(rows[1]?.checks[0]).toMatchObject({ service: "number.spam", status: "ok", registered: true, billed: false, cached: false, attributes: { risk_level: "high" } });
  });

  it("is what results_url points at", async () => {
    const key = await reader();
    const job = await api.get(key, small);
    const viaUrl = await gw.http().get(new URL(job.body.results_url).pathname).set("Authorization", `Bearer ${key}`);
    expect(viaUrl.status).toBe(200);
    expect(rowNos(viaUrl.body.data)).toEqual(range(1, 20));
  });

  it("pages with limit (default 100, at most 1000) and next_cursor, visiting every row exactly once", async () => {
    const key = await reader();
    const byDefault = await api.results(key, big);
    expect(byDefault.body.data).toHaveLength(100);
    expect(byDefault.body.has_more).toBe(true);

    const { rows, pages } = await allPages(api, key, big, { limit: 1000 });
    expect(pages).toEqual([1000, 1000, 345]);
    expect(rowNos(rows)).toEqual(range(1, 2_345));
    expect(rows.slice(0, 2_000).every((r) => r.kind === "number" && r.checks.map((c) => c.service).join() === "whatsapp")).toBe(true);
    expect(rows.slice(2_000).every((r) => r.kind === "email" && r.checks.map((c) => c.service).join() === "email")).toBe(true);

    const odd = await allPages(api, key, small, { limit: 7 });
    expect(odd.pages).toEqual([7, 7, 6]);
    expect(rowNos(odd.rows)).toEqual(range(1, 20));

    const exact = await allPages(api, key, small, { limit: 20 });
    expect(exact.pages).toEqual([20]);
  });

  it("refuses limit outside 1-1000", async () => {
    const key = await reader();
    expectError(await api.results(key, small, { limit: 1001 }), 400, "invalid_request", "limit");
    expectError(await api.results(key, small, { limit: 0 }), 400, "invalid_request", "limit");
    expectError(await api.results(key, small, { limit: "ten" }), 400, "invalid_request", "limit");
    expect((await api.results(key, small, { limit: 1000 })).status).toBe(200);
  });
});

describe("results filters", () => {
  it.each([
    ["registered=true on the first check", { registered: "true" }, [2, 3, 4, 5, 12]],
    ["registered=false", { registered: "false" }, [1, 11]],
    ["registered=null (unknown, suppressed, unsupported, invalid, duplicate)", { registered: "null" }, [6, 7, 8, 9, 10]],
    ["status=ok", { status: "ok" }, [1, 2, 3, 4, 5, 11, 12]],
    ["status=unsupported_country", { status: "unsupported_country" }, [8]],
    ["status=suppressed", { status: "suppressed" }, [7]],
    ["status and registered together", { status: "ok", registered: "false" }, [1, 11]],
    ["service by alias", { service: "spam", registered: "true" }, [2, 3, 4, 5, 12]],
    ["service by code", { service: "number.spam", status: "unknown" }, [6]],
    ["another phone service", { service: "whatsapp", registered: "true" }, [1, 3, 8, 12]],
    ["another phone service's status", { service: "whatsapp", status: "unknown" }, [5, 6]],
    ["the e-mail service: only e-mail rows", { service: "email", registered: "true" }, [13, 20]],
    ["the e-mail service, registered=null", { service: "email", registered: "null" }, [15, 16, 17, 18, 19]],
    ["the e-mail service, status=ok", { service: "email", status: "ok" }, [13, 14, 15, 20]],
    ["a status nothing has", { status: "cancelled" }, []],
    ["a service without a filter: every row", { service: "email" }, range(1, 20)],
  ])("%s", async (_name, query, expected) => {
    const key = await reader();
    const { rows } = await allPages(api, key, small, query);
    expect(rowNos(rows)).toEqual(expected);
    // Filtered rows still carry every check of their row.
    for (const r of rows) expect(r.checks).toHaveLength(r.kind === "number" ? 2 : 1);
  });

  it("defaults the service to the job's first check, here the e-mail check", async () => {
    const key = await reader();
    const job = await api.create(key, { numbers: [TEST.clean, TEST.scam], emails: [TEST.deliverable, TEST.undeliverable], checks: ["email", "spam"] });
    expect(job.status).toBe(201);
    const { rows } = await allPages(api, key, job.body.id, { registered: "true" });
    expect(rows.map((r) => r.email)).toEqual([TEST.deliverable]);
    const spam = await allPages(api, key, job.body.id, { service: "spam", registered: "true" });
    expect(spam.rows.map((r) => r.e164)).toEqual([TEST.scam]);
  });

  it("pages through a filter: every matching row once, in order", async () => {
    const key = await reader();
    const everything = await allPages(api, key, big, { limit: 1000 });
    const expected = everything.rows.filter((r) => r.checks.some((c) => c.service === "whatsapp" && c.registered === true)).map((r) => r.row_no);
    expect(expected.length).toBeGreaterThan(500);
    const { rows, pages } = await allPages(api, key, big, { service: "whatsapp", registered: "true", limit: 250 });
    expect(rowNos(rows)).toEqual(expected);
    expect(pages.slice(0, -1).every((n) => n === 250)).toBe(true);

    const small2 = await allPages(api, key, small, { registered: "true", limit: 2 });
    expect(small2.pages).toEqual([2, 2, 1]);
    expect(rowNos(small2.rows)).toEqual([2, 3, 4, 5, 12]);
  });

  it("refuses a service that is not one of the job's checks, and unknown filter values", async () => {
    const key = await reader();
    expectError(await api.results(key, small, { service: "carrier", registered: "true" }), 400, "invalid_request", "service");
    expectError(await api.results(key, small, { service: "telepathy" }), 400, "invalid_request", "service");
    expectError(await api.results(key, small, { registered: "maybe" }), 400, "invalid_request", "registered");
    expectError(await api.results(key, small, { colour: "red" }), 400, "invalid_request", "colour");
  });
});

describe("results cursors", () => {
  async function cursorOf(key: string, id: string, query: Record<string, string | number> = {}): Promise<string> {
    const res = await api.results(key, id, { limit: 2, ...query });
    expect(res.body.has_more).toBe(true);
    return res.body.next_cursor as string;
  }
  /** The cursor with one character at `at` replaced by another valid base64url character. */
  const flip = (cursor: string, at: number) => `${cursor.slice(0, at)}${cursor[at] === "A" ? "B" : "A"}${cursor.slice(at + 1)}`;

  it("continues with the cursor of the same listing (a code and its alias are the same listing)", async () => {
    const key = await reader();
    const after = await cursorOf(key, small, { service: "spam", registered: "true" });
    const next = await api.results(key, small, { service: "number.spam", registered: "true", after, limit: 2 });
    expect(next.status).toBe(200);
    expect(rowNos(next.body.data)).toEqual([4, 5]);
  });

  it("refuses a cursor changed by one character, anywhere", async () => {
    const key = await reader();
    const after = await cursorOf(key, small);
    const dot = after.indexOf(".");
    expect(dot).toBeGreaterThan(0);
    for (const at of [0, Math.floor(dot / 2), dot - 1, dot + 1, after.length - 1]) {
      const res = await api.results(key, small, { after: flip(after, at), limit: 2 });
      expect({ at, status: res.status, code: res.body.error?.code }).toEqual({ at, status: 400, code: "invalid_cursor" });
    }
  });

  it.each([["garbage"], [""], ["a.b.c"], ["eyJsIjoiam9iIiwiciI6MX0."], [".abc"], ["%%%.%%%"]])("refuses the malformed cursor %p", async (after) => {
    const key = await reader();
    expectError(await api.results(key, small, { after }), 400, "invalid_cursor");
  });

  it("refuses a cursor of another job", async () => {
    const key = await reader();
    const fromBig = await cursorOf(key, big);
    expectError(await api.results(key, small, { after: fromBig, limit: 2 }), 400, "invalid_cursor");
    const other = await api.create(key, SMALL);
    const fromOther = await cursorOf(key, other.body.id);
    expectError(await api.results(key, small, { after: fromOther, limit: 2 }), 400, "invalid_cursor");
  });

  it("refuses a cursor of the same job under other filters", async () => {
    const key = await reader();
    const unfiltered = await cursorOf(key, small);
    expectError(await api.results(key, small, { after: unfiltered, status: "ok" }), 400, "invalid_cursor");
    const registered = await cursorOf(key, small, { registered: "true" });
    expectError(await api.results(key, small, { after: registered, registered: "false" }), 400, "invalid_cursor");
    expectError(await api.results(key, small, { after: registered }), 400, "invalid_cursor");
    expectError(await api.results(key, small, { after: registered, registered: "true", service: "whatsapp" }), 400, "invalid_cursor");
    expect((await api.results(key, small, { after: registered, registered: "true" })).status).toBe(200);
  });
});
