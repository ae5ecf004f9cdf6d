import { createReadStream, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { DEFAULT_SCOPES } from "@svc/domain";
import {
  Client,
  IdempotencyKeyReusedError,
  InsufficientScopeError,
  InvalidRequestError,
  NotFoundError,
  SandboxMagicOnlyError,
  TemporarilyUnavailableError,
  UnauthorizedError,
  isJobFinished,
  type Job,
  type ResultRow,
} from "@svc/sdk";
import { solveChallenge } from "../../services/gateway/src/test-keys/proof-of-work";
import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";

/**
 * Every SDK method against the real gateway (a real HTTP server on loopback with
 * real Postgres and Redis), in test mode. Live paths with workers are in live.test.ts,
 * deliveries in webhooks.test.ts.
 */
const SANDBOX = "svc_test_publicSandboxDemoKey2026v1AbCd4QUfHJ";
let gw: TestGateway;
let k: TestKey;
let client: Client;
const dir = mkdtempSync(path.join(tmpdir(), "sdk-gw-"));

beforeAll(async () => {
  gw = await startTestGateway({ config: { WEBHOOK_ALLOW_PRIVATE_RANGES: "127.0.0.0/8" } });
  k = await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: [...DEFAULT_SCOPES, "webhooks:manage"] });
  client = new Client({ apiKey: k.key, baseUrl: gw.url });
});
afterAll(async () => {
  await gw?.close();
});

describe("lookups", () => {
  it("create answers a completed lookup with typed rows (numbers first, then e-mails)", async () => {
    const lookup = await client.lookups.create({ numbers: ["+12025550101"], emails: ["deliverable@example.com"], checks: ["spam", "email"] });
    expect(lookup).toMatchObject({ object: "lookup", status: "completed", livemode: false, checks: ["number.spam", "email"] });
    expect(lookup.results.map((r) => [r.kind, r.input])).toEqual([["number", "+12025550101"], ["email", "deliverable@example.com"]]);
    expect(lookup.results[0]?.checks[0]).toMatchObject({ service: "number.spam", status: "ok", registered: true, attributes: { risk_level: "high" } });
    const read = await client.lookups.get(lookup.id);
    expect(read.results[0]?.input).not.toBe("+12025550101"); // masked on later reads
    expect(read.results[0]?.e164).toBe("+12025550101");
  });

  it("a pending lookup (202) completes through get({ wait }) and waitForLookup, on the API's long poll", async () => {
    const pending = await client.lookups.create({ numbers: ["+12025550107"], checks: ["spam"], wait: 0 });
    expect(pending.status).toBe("pending");
    expect(pending.next?.poll_url).toBe(`${gw.url}/v1/lookups/${pending.id}`);
    const early = await client.lookups.get(pending.id, { wait: 0 });
    expect(early.status).toBe("pending");
    const started = Date.now();
    const done = await client.lookups.waitForLookup(pending.id);
    expect(done.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(6_000);

    const second = await client.lookups.create({ emails: ["pending@example.com"], checks: ["email"], wait: 0 });
    const held = await client.lookups.get(second.id, { wait: 10 });
    expect(held.status).toBe("completed");
  });

  it("a resent call with the same Idempotency-Key is replayed; with another body it is refused", async () => {
    const body = { numbers: ["+12025550100"], checks: ["spam"] };
    const first = await client.request("createLookup", { body, options: { idempotencyKey: "sdk-replay-1" } });
    const again = await client.request<{ id: string }>("createLookup", { body, options: { idempotencyKey: "sdk-replay-1" } });
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    expect(again.data.id).toBe((first.data as { id: string }).id);
    expect(again.idempotencyKey).toBe("sdk-replay-1");
    const reused = await client.lookups.create({ numbers: ["+12025550101"], checks: ["spam"] }, { idempotencyKey: "sdk-replay-1" }).catch((e) => e);
    expect(reused).toBeInstanceOf(IdempotencyKeyReusedError);
  });
});

describe("errors from the gateway", () => {
  it("carry code, status, retryable, param and the response's X-Request-Id", async () => {
    const bad = await client.lookups.create({ numbers: ["+12025550100"], checks: ["no_such_check"] }).catch((e) => e);
    expect(bad).toBeInstanceOf(InvalidRequestError);
    expect(bad).toMatchObject({ code: "invalid_request", status: 400, retryable: false, param: "checks[0]", attempts: 1 });
    expect(bad.requestId).toMatch(/^req_/);
    expect(bad.docUrl).toContain("/docs/errors#invalid_request");

    const unknownKey = new Client({ apiKey: "svc_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000", baseUrl: gw.url });
    const denied = await unknownKey.account.get().catch((e) => e);
    expect(denied).toBeInstanceOf(UnauthorizedError);
    expect(denied).toMatchObject({ status: 401, param: null, requestId: expect.stringMatching(/^req_/) });

    const sandbox = new Client({ apiKey: SANDBOX, baseUrl: gw.url });
    const magic = await sandbox.lookups.create({ numbers: ["+14155550123"], checks: ["spam"] }).catch((e) => e);
    expect(magic).toBeInstanceOf(SandboxMagicOnlyError);
    expect(magic.param).toBe("numbers[0]");

    const narrow = await accountWithKey(gw.store, gw.env.keyHashSecret, { scopes: ["lookup:write"] });
    const scoped = await new Client({ apiKey: narrow.key, baseUrl: gw.url }).account.get().catch((e) => e);
    expect(scoped).toBeInstanceOf(InsufficientScopeError);
  });

  it("the outage test number (503 temporarily_unavailable, Retry-After) is retried, waiting Retry-After each time", async () => {
    const waits: number[] = [];
    const c = new Client({ apiKey: k.key, baseUrl: gw.url, retry: { sleep: async (ms) => void waits.push(ms) } });
    const err = await c.lookups.create({ numbers: ["+12025550108"], checks: ["spam"] }).catch((e) => e);
    expect(err).toBeInstanceOf(TemporarilyUnavailableError);
    expect(err.attempts).toBe(3);
    expect(err.retryAfterMs).toBeGreaterThanOrEqual(0);
    expect(waits).toEqual([err.retryAfterMs, err.retryAfterMs]);
  });
});

describe("jobs", () => {
  const numbers = ["+12025550100", "+12025550101", "+12025550102", "+12025550103", "+12025550105", "+999123"];
  const emails = ["deliverable@example.com", "undeliverable@example.com"];

  it("estimate and create from arrays; get; the job is final at once in test mode", async () => {
    const estimate = await client.jobs.estimate({ numbers, emails, checks: ["spam", "email"] });
    expect(estimate).toMatchObject({ object: "estimate", rows: { total: 8, invalid: 1 }, max_cost: { currency: "USD" } });
    expect(typeof estimate.max_cost.amount).toBe("string");
    const job = await client.jobs.create({ numbers, emails, checks: ["spam", "email"], max_cost: { amount: "5.00" } });
    expect(job).toMatchObject({ object: "job", status: "completed", progress: { total: 8 }, estimate: { rows: { total: 8 } } });
    expect(isJobFinished(job)).toBe(true);
    const read = await client.jobs.get(job.id, { wait: 1 });
    expect(read.id).toBe(job.id);
    expect(read.estimate).toBeUndefined();
  });

  it("create and estimate from a CSV file path, a Node Readable, a web ReadableStream and a Blob (multipart)", async () => {
    const csv = "phone,email\n+12025550100,deliverable@example.com\n+12025550101,\n,undeliverable@example.com\n";
    const file = path.join(dir, "list.csv");
    writeFileSync(file, csv);
    const fromPath = await client.jobs.create({ file, checks: ["spam", "email"], progress_events: false });
    expect(fromPath.progress).toMatchObject({ total: 4, checks_total: 4 });
    const estimate = await client.jobs.estimate({ file: createReadStream(file), checks: ["spam", "email"] });
    expect(estimate.rows).toMatchObject({ total: 4, valid: 4 });
    const web = Readable.toWeb(Readable.from([Buffer.from(csv.slice(0, 20)), Buffer.from(csv.slice(20))])) as ReadableStream<Uint8Array>;
    const fromWeb = await client.jobs.create({ file: web, checks: ["spam", "email"] });
    expect(fromWeb.progress.total).toBe(4);
    const fromBlob = await client.jobs.create({ file: new Blob([csv]), filename: "x.csv", checks: ["spam", "email"] });
    expect(fromBlob.progress.total).toBe(4);
    const rows = await client.jobs.results(fromPath.id).toArray();
    expect(rows.map((r) => r.e164 ?? r.email)).toEqual(["+12025550100", "+12025550101", "deliverable@example.com", "undeliverable@example.com"]);

    const missing = await client.jobs.create({ file: path.join(dir, "nope.csv"), checks: ["spam"] }).catch((e) => e);
    expect(missing).toMatchObject({ code: "invalid_argument", param: "file" });
    const badFile = await client.jobs.create({ file: new Blob(["phone\n\"unbalanced\n"]), checks: ["spam"] }).catch((e) => e);
    expect(badFile).toMatchObject({ code: "invalid_request", param: "file" });
  });

  it("results: an async iterator that follows next_cursor page by page, with filters; resultsPage one at a time", async () => {
    const job = await client.jobs.create({ numbers, emails, checks: ["spam", "email"] });
    const pages: number[] = [];
    const seen: ResultRow[] = [];
    for await (const page of client.jobs.results(job.id, { limit: 3 }).pages()) pages.push(page.data.length);
    for await (const row of client.jobs.results(job.id, { limit: 3 })) seen.push(row);
    expect(pages).toEqual([3, 3, 2]);
    expect(seen.map((r) => r.row_no)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

    const first = await client.jobs.resultsPage(job.id, { limit: 5 });
    expect(first).toMatchObject({ object: "list", has_more: true });
    const rest = await client.jobs.resultsPage(job.id, { limit: 5, after: first.next_cursor });
    expect(rest.data.map((r) => r.row_no)).toEqual([6, 7, 8]);
    expect(rest.next_cursor).toBeNull();

    const registered = await client.jobs.results(job.id, { service: "spam", registered: true }).toArray();
    expect(registered.map((r) => r.e164)).toEqual(["+12025550101", "+12025550102", "+12025550103"]);
    const notAnswered = await client.jobs.results(job.id, { service: "spam", registered: null }).toArray();
    expect(notAnswered.every((r) => r.checks[0]?.registered === null)).toBe(true);
    const unknown = await client.jobs.results(job.id, { service: "spam", status: "unknown" }).toArray();
    expect(unknown.map((r) => r.e164)).toEqual(["+12025550105"]);
    await expect(client.jobs.resultsPage(job.id, { after: "forged" })).rejects.toMatchObject({ code: "invalid_cursor" });
  });

  it("download streams CSV to a path, NDJSON to a Node Writable and to a WritableStream; downloadStream gives the bytes", async () => {
    const job = await client.jobs.create({ numbers, emails, checks: ["spam", "email"] });
    const file = path.join(dir, "out.csv");
    const csv = await client.jobs.download(job.id, { format: "csv", to: file });
    const text = readFileSync(file, "utf8");
    expect(csv).toMatchObject({ format: "csv", bytes: Buffer.byteLength(text), filename: expect.stringContaining(job.id) });
    expect(text.split("\n")[0]).toMatch(/^row_no,input_masked,e164,country,number_status,service,status,registered,business,checked_at,cached,billed,kind,email,email_status/);
    expect(text.trim().split("\n")).toHaveLength(9);

    const chunks: Buffer[] = [];
    const sink = new Writable({ write: (c, _e, cb) => void (chunks.push(c), setTimeout(cb, 1)), highWaterMark: 16 });
    const nd = await client.jobs.download(job.id, { format: "ndjson", to: sink });
    const lines = Buffer.concat(chunks).toString("utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(8);
    expect(nd.bytes).toBe(Buffer.concat(chunks).length);
    expect(sink.writableFinished).toBe(true);

    const webChunks: Uint8Array[] = [];
    await client.jobs.download(job.id, { format: "ndjson", to: new WritableStream({ write: (c) => void webChunks.push(c) }) });
    expect(Buffer.concat(webChunks).toString("utf8")).toBe(Buffer.concat(chunks).toString("utf8"));

    const { stream } = await client.jobs.downloadStream(job.id, { format: "csv" });
    expect(await new Response(stream).text()).toBe(text);
    await expect(client.jobs.download(job.id, { format: "xml" as "csv", to: path.join(dir, "x") })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("cancel on a finished job purges its results (purge is the same call); later reads are not_found", async () => {
    const job = await client.jobs.create({ numbers: ["+12025550100"], checks: ["spam"] });
    const purged: Job = await client.jobs.cancel(job.id);
    expect(purged.purged_at).not.toBeNull();
    expect((await client.jobs.purge(job.id)).id).toBe(job.id);
    await expect(client.jobs.resultsPage(job.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.jobs.get("job_doesNotExist")).rejects.toMatchObject({ code: "not_found", status: 404 });
  });

  it("waitForJob returns a final job at once, reporting it once", async () => {
    const job = await client.jobs.create({ numbers: ["+12025550100"], checks: ["spam"] });
    const seen: Job[] = [];
    const done = await client.jobs.waitForJob(job.id, { onProgress: (j) => seen.push(j) });
    expect(done.status).toBe("completed");
    expect(seen).toHaveLength(1);
  });
});

describe("account, limits, usage, services, health", () => {
  it("account, limits and usage of the key's mode; money as strings", async () => {
    const account = await client.account.get();
    expect(account).toMatchObject({ object: "account", id: k.accountId, livemode: false, balance: { amount: "10.00", currency: "USD" } });
    const limits = await client.limits.get();
    expect(limits.request_sizes.lookup_identifiers).toBe(100);
    const today = new Date();
    const byDay = await client.usage.get({ from: new Date(today.getTime() - 2 * 86_400_000), to: today });
    expect(byDay).toMatchObject({ object: "usage", group_by: "day" });
    expect(byDay.data).toHaveLength(3);
    expect(typeof byDay.totals.cost.amount).toBe("string");
    const byCheck = await client.usage.get({ from: today.toISOString().slice(0, 10), to: today.toISOString().slice(0, 10), groupBy: "check" });
    expect(byCheck.group_by).toBe("check");
    expect(byCheck.data.some((r) => r.service === "number.spam" && r.checks > 0)).toBe(true);
    await expect(client.usage.get({ from: "2026-01-10", to: "2026-01-01" })).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("services: the account's catalog with a key, the public one without; health without a key", async () => {
    const own = await client.services.list();
    expect(own.account_specific).toBe(true);
    const saved = process.env.SVC_API_KEY;
    delete process.env.SVC_API_KEY;
    try {
      const anonymous = new Client({ baseUrl: gw.url });
      const pub = await anonymous.services.list();
      expect(pub.account_specific).toBe(false);
      expect(pub.data.map((s) => s.code)).toContain("number.spam");
      expect(await anonymous.health.check()).toMatchObject({ status: "ok", database: "ok" });
    } finally {
      if (saved !== undefined) process.env.SVC_API_KEY = saved;
    }
  });

  it("testKeys: a challenge, solved, gives a personal test key that works with the SDK", async () => {
    const anonymous = new Client({ baseUrl: gw.url, apiKey: undefined });
    const challenge = await anonymous.testKeys.challenge();
    const issued = await anonymous.testKeys.create({
      email: "sdk-test@example.org",
      name: "SDK test",
      company: "Tests",
      use_case: "Testing the SDK",
      challenge_token: `${challenge.challenge}:${solveChallenge(challenge.challenge, challenge.difficulty)}`,
    });
    expect(issued.key).toMatch(/^svc_test_/);
    const mine = new Client({ apiKey: issued.key, baseUrl: gw.url });
    expect((await mine.lookups.create({ numbers: ["+12025550100"], checks: ["spam"] })).status).toBe("completed");
  });
});

describe("webhook endpoints", () => {
  it("create (secret once), list, update, test, delete", async () => {
    const made = await client.webhookEndpoints.create({ url: "https://127.0.0.1:9/hooks", events: ["job.completed"] });
    expect(made).toMatchObject({ object: "webhook_endpoint", status: "pending_verification", livemode: false, events: ["job.completed"] });
    expect(made.secret).toMatch(/^whsec_/);
    const list = await client.webhookEndpoints.list();
    expect(list.data.map((e) => e.id)).toContain(made.id);
    expect(list.data.find((e) => e.id === made.id)?.secret).toBeUndefined();
    const updated = await client.webhookEndpoints.update(made.id, { events: ["job.completed", "lookup.completed"] });
    expect(updated.events).toEqual(["job.completed", "lookup.completed"]);
    const queued = await client.webhookEndpoints.test(made.id);
    expect(queued).toMatchObject({ object: "event", type: "webhook.test", id: expect.stringMatching(/^evt_/) });
    await expect(client.webhookEndpoints.delete(made.id)).resolves.toBeUndefined();
    expect((await client.webhookEndpoints.list()).data.map((e) => e.id)).not.toContain(made.id);
    await expect(client.webhookEndpoints.delete(made.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.webhookEndpoints.create({ url: "http://127.0.0.1:9/plain", events: ["job.completed"] })).rejects.toMatchObject({ code: "invalid_request", param: "url" });
  });
});
