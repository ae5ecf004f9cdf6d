import type { TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { TEST, expectError, jobsApi, type JobsApi } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

const body = { numbers: [TEST.clean, TEST.scam, TEST.invalid], emails: [TEST.deliverable], checks: ["spam", "whatsapp", "email"] };

async function newJob(key: TestKey): Promise<{ id: string; created: Record<string, unknown> }> {
  const res = await api.create(key.key, body);
  expect(res.status).toBe(201);
  return { id: res.body.id, created: res.body };
}

const storedRows = async (id: string) =>
  (await gw.store.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM result_rows WHERE job_id = $1`, [id])).rows[0]?.n;

describe("DELETE /v1/jobs/{id} on a finished (test) job", () => {
  it("deletes the results now and answers 200 with purged_at set; the job itself stays readable", async () => {
    const k = await api.newKey();
    const { id, created } = await newJob(k);
    expect(await storedRows(id)).toBe(4);

    const before = Date.now();
    const res = await api.remove(k.key, id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, object: "job", status: "completed", progress: created.progress, cost: created.cost, results_url: created.results_url });
    expect(res.body).not.toHaveProperty("estimate");
    expect(typeof res.body.purged_at).toBe("string");
    expect(new Date(res.body.purged_at).getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(await storedRows(id)).toBe(0);

    const read = await api.get(k.key, id);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it("makes later results and downloads 404 not_found", async () => {
    const k = await api.newKey();
    const { id } = await newJob(k);
    expect((await api.results(k.key, id)).status).toBe(200);
    const cursor = (await api.results(k.key, id, { limit: 1 })).body.next_cursor;
    expect((await api.remove(k.key, id)).status).toBe(200);
    expectError(await api.results(k.key, id), 404, "not_found", null);
    expectError(await api.results(k.key, id, { registered: "true", service: "spam" }), 404, "not_found");
    expectError(await api.results(k.key, id, { after: cursor, limit: 1 }), 404, "not_found");
    expectError(await api.download(k.key, id, { format: "csv" }), 404, "not_found", null);
    expectError(await api.download(k.key, id, { format: "ndjson" }), 404, "not_found", null);
  });

  it("is repeatable: a second DELETE keeps the first purged_at", async () => {
    const k = await api.newKey();
    const { id } = await newJob(k);
    const first = await api.remove(k.key, id);
    await new Promise((r) => setTimeout(r, 20));
    const second = await api.remove(k.key, id);
    expect(second.status).toBe(200);
    expect(second.body.purged_at).toBe(first.body.purged_at);
  });

  it("leaves other jobs' results alone", async () => {
    const k = await api.newKey();
    const { id } = await newJob(k);
    const other = await newJob(k);
    expect((await api.remove(k.key, id)).status).toBe(200);
    expect(await storedRows(other.id)).toBe(4);
    const res = await api.results(k.key, other.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(4);
    expect((await api.get(k.key, other.id)).body.purged_at).toBeNull();
  });
});

describe("who may DELETE", () => {
  it("needs jobs:write", async () => {
    const k = await api.newKey();
    const { id } = await newJob(k);
    const reader = await api.newKey({ accountId: k.accountId, scopes: ["jobs:read", "jobs:read_all"] });
    expectError(await api.remove(reader.key, id), 403, "insufficient_scope", null);
    expect(await storedRows(id)).toBe(4);
    expect((await api.get(k.key, id)).body.purged_at).toBeNull();
  });

  it("acts only on jobs the key can read: another account's or another key's job is 404", async () => {
    const creator = await api.newKey({ scopes: ["jobs:write", "jobs:read"] });
    const { id } = await newJob(creator);
    const stranger = await api.newKey();
    expectError(await api.remove(stranger.key, id), 404, "not_found");
    const sibling = await api.newKey({ accountId: creator.accountId, scopes: ["jobs:write", "jobs:read"] });
    expectError(await api.remove(sibling.key, id), 404, "not_found");
    const live = await api.newKey({ mode: "live", accountId: creator.accountId });
    expectError(await api.remove(live.key, id), 404, "not_found");
    expectError(await api.remove(creator.key, "job_doesNotExist00000000"), 404, "not_found");
    expect(await storedRows(id)).toBe(4);

    const admin = await api.newKey({ accountId: creator.accountId, scopes: ["jobs:write", "jobs:read_all"] });
    const res = await api.remove(admin.key, id);
    expect(res.status).toBe(200);
    expect(res.body.purged_at).not.toBeNull();
    expect(await storedRows(id)).toBe(0);
  });
});
