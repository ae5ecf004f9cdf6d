import type { TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { PUBLIC_SANDBOX_KEY, TEST, expectError, jobsApi, type JobsApi, type Res } from "./helpers";

let gw: TestGateway;
let api: JobsApi;
beforeAll(async () => {
  gw = await startTestGateway();
  api = jobsApi(gw);
});
afterAll(async () => gw.close());

const body = { numbers: [TEST.clean, TEST.scam], emails: [TEST.deliverable], checks: ["spam", "email"] };

async function newJob(key: TestKey): Promise<string> {
  const res = await api.create(key.key, body);
  expect(res.status).toBe(201);
  return res.body.id;
}

/** GET job, results and download: the three reads, which must agree on who may see a job. */
const reads = (key: string, id: string): Array<Promise<Res>> => [api.get(key, id), api.results(key, id), api.download(key, id, { format: "ndjson" })];

async function expectHidden(key: string, id: string): Promise<void> {
  for (const res of await Promise.all(reads(key, id))) expectError(res, 404, "not_found", null);
}
async function expectVisible(key: string, id: string): Promise<void> {
  expect((await Promise.all(reads(key, id))).map((r) => r.status)).toEqual([200, 200, 200]);
}

describe("GET /v1/jobs/{id}", () => {
  it("returns the job: status, progress and cost", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    const res = await api.get(k.key, id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      object: "job",
      status: "completed",
      livemode: false,
      progress: { total: 3, checks_total: 3, done: 3, conclusive: 0, non_billable: 3 },
      cost: { reserved: { amount: "0.00", currency: "USD" }, charged: { amount: "0.00", currency: "USD" } },
      purged_at: null,
    });
    expect(res.body).not.toHaveProperty("estimate");
  });

  it("accepts wait 0-30 and, the test job being final, answers at once", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    for (const wait of [0, 1, 30]) {
      const started = Date.now();
      const res = await api.get(k.key, id, { wait });
      expect({ wait, status: res.status, jobStatus: res.body.status }).toEqual({ wait, status: 200, jobStatus: "completed" });
      expect(Date.now() - started).toBeLessThan(1_500);
    }
  });

  it.each([[31], [-1], ["soon"], [2.5]])("refuses wait=%p with param wait", async (wait) => {
    const k = await api.newKey();
    const id = await newJob(k);
    expectError(await api.get(k.key, id, { wait }), 400, "invalid_request", "wait");
  });

  it("refuses other query parameters", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    expectError(await api.get(k.key, id, { expand: "results" }), 400, "invalid_request", "expand");
  });
});

describe("who can see a job", () => {
  it("hides unknown ids and malformed ids", async () => {
    const k = await api.newKey();
    await expectHidden(k.key, "job_doesNotExist00000000");
    await expectHidden(k.key, "not-an-id");
    const lookup = await gw.http().post("/v1/lookup").set("Authorization", `Bearer ${k.key}`).send({ numbers: [TEST.clean], checks: ["spam"] });
    await expectHidden(k.key, lookup.body.id);
  });

  it("hides a job from another account", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    const stranger = await api.newKey();
    await expectHidden(stranger.key, id);
    await expectHidden(PUBLIC_SANDBOX_KEY, id);
    await expectVisible(k.key, id);
  });

  it("hides a test job from live and agent keys of the same account", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    const live = await api.newKey({ mode: "live", accountId: k.accountId });
    await expectHidden(live.key, id);
    const agent = await api.newKey({ mode: "agent", accountId: k.accountId, scopes: ["jobs:read", "jobs:read_all"] });
    await expectHidden(agent.key, id);
  });

  it("shows a jobs:read key only its own jobs, and a jobs:read_all key every job of the account", async () => {
    const creator = await api.newKey({ scopes: ["jobs:write", "jobs:read"] });
    const id = await newJob(creator);
    await expectVisible(creator.key, id);

    const sibling = await api.newKey({ accountId: creator.accountId, scopes: ["jobs:write", "jobs:read"] });
    await expectHidden(sibling.key, id);
    const ownOfSibling = await newJob(sibling);
    await expectHidden(creator.key, ownOfSibling);

    const all = await api.newKey({ accountId: creator.accountId, scopes: ["jobs:read_all"] });
    await expectVisible(all.key, id);
    await expectVisible(all.key, ownOfSibling);

    // Default test-key scopes include jobs:read_all.
    const plain = await api.newKey({ accountId: creator.accountId });
    await expectVisible(plain.key, id);
  });

  it("needs jobs:read or jobs:read_all", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    const writer = await api.newKey({ accountId: k.accountId, scopes: ["jobs:write", "lookup:write", "account:read"] });
    for (const res of await Promise.all(reads(writer.key, id))) expectError(res, 403, "insufficient_scope", null);
  });

  it("hides a job after the account's retention period", async () => {
    const k = await api.newKey();
    const id = await newJob(k);
    gw.setNow(new Date(Date.now() + 29 * 86_400_000));
    try {
      await expectVisible(k.key, id);
      gw.setNow(new Date(Date.now() + 31 * 86_400_000));
      await expectHidden(k.key, id);
      expectError(await api.remove(k.key, id), 404, "not_found");
    } finally {
      gw.setNow(null);
    }
  });
});
