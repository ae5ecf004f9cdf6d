import { accountWithKey, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { bodies, startMcp, startRecorder, type McpSession, type Recorder } from "./harness";

/**
 * A confirmation is bound to what was confirmed: `confirmation_required` hands out a
 * token for one call, bound to the tool, its exact arguments and the quoted cost, and
 * `confirm_max_cost` is accepted only with such a token. Every way around it is
 * refused with `confirmation_invalid` (or `cost_limit_exceeded` for an amount below
 * the quote) before anything is sent. The token is spent only once its call has a
 * definitive outcome; after a lost answer it stays good for the identical repeat. The built server over stdio, against the real
 * gateway behind a recording relay; test keys (free, but more than 100 numbers needs
 * confirmation) and an agent key at live prices for amounts.
 */
let gw: TestGateway;
let recorder: Recorder;
let k: TestKey;
let mcp: McpSession;
const sessions: McpSession[] = [];

const numbersList = (n: number, from = 1000) => Array.from({ length: n }, (_, i) => `+1415555${String(from + i * 7).padStart(4, "0")}`);
const LIST = { numbers: numbersList(150), checks: ["spam"] };

beforeAll(async () => {
  gw = await startTestGateway();
  recorder = await startRecorder(gw.url);
  k = await accountWithKey(gw.store, gw.env.keyHashSecret);
  mcp = await session({ SVC_API_KEY: k.key });
}, 30_000);
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => undefined);
  await recorder?.close();
  await gw?.close();
});
beforeEach(() => void (recorder.requests.length = 0));

async function session(env: Record<string, string>): Promise<McpSession> {
  const s = await startMcp({ SVC_BASE_URL: recorder.url, ...env });
  sessions.push(s);
  return s;
}

const sent = (method: string, p: string) => recorder.requests.filter((q) => q.method === method && q.path.split("?")[0] === p).length;
const jobsOf = async (accountId: string) => (await gw.store.pool.query(`SELECT id FROM jobs WHERE account_id = $1`, [accountId])).rows.map((r: { id: string }) => r.id);

/** The confirmation_required answer for `args`, and the two arguments it says to send back. */
async function quote(s: McpSession, tool: string, args: Record<string, unknown>): Promise<{ confirm_max_cost: string; confirmation_token: string; expires_at: string }> {
  const r = await s.call(tool, args);
  expect(r.data.error).toMatchObject({ code: "confirmation_required", confirm: { single_use: true } });
  return { ...r.data.error.confirm.arguments, expires_at: r.data.error.confirm.expires_at };
}
const confirmFields = (q: { confirm_max_cost: string; confirmation_token: string }) => ({ confirm_max_cost: q.confirm_max_cost, confirmation_token: q.confirmation_token });

function expectInvalid(r: { isError: boolean; data: Record<string, any> }, reason: string, param = "confirmation_token") {
  expect(r.isError).toBe(true);
  expect(r.data.error).toMatchObject({ code: "confirmation_invalid", reason, param, status: null, retryable: false });
  expect(r.data.error.message).toMatch(/^Refused, nothing sent or charged: /);
}

describe("confirm_max_cost needs the token of a confirmation that came first", () => {
  it("a first-ever create_job of 150 numbers carrying confirm_max_cost 5.00 is refused (missing_token): no estimate, no job", async () => {
    const before = await jobsOf(k.accountId);
    const r = await mcp.call("create_job", { ...LIST, confirm_max_cost: "5.00" });
    expectInvalid(r, "missing_token");
    expect(r.data.error.message).toContain("without confirm_max_cost");
    expect(recorder.requests).toEqual([]);
    expect(await jobsOf(k.accountId)).toEqual(before);
  });

  it("also for a call that would need no confirmation, and for lookup", async () => {
    expectInvalid(await mcp.call("create_job", { numbers: numbersList(3), checks: ["spam"], confirm_max_cost: "0.50" }), "missing_token");
    expectInvalid(await mcp.call("lookup", { numbers: ["+12025550100"], checks: ["spam"], confirm_max_cost: "0.50" }), "missing_token");
    expect(recorder.requests).toEqual([]);
  });

  it("a token without confirm_max_cost (the amount the person approves) is refused (missing_amount)", async () => {
    const q = await quote(mcp, "create_job", LIST);
    recorder.requests.length = 0;
    expectInvalid(await mcp.call("create_job", { ...LIST, confirmation_token: q.confirmation_token }), "missing_amount", "confirm_max_cost");
    expect(recorder.requests).toEqual([]);
  });
});

describe("a token confirms exactly the call that was quoted", () => {
  it("another list (a larger one, the same numbers reordered), other checks, another idempotency_key or another tool: arguments_changed, nothing sent", async () => {
    const q = await quote(mcp, "create_job", LIST);
    recorder.requests.length = 0;
    const before = await jobsOf(k.accountId);
    const variants: Array<[string, Record<string, unknown>]> = [
      ["create_job", { ...LIST, numbers: numbersList(300) }],
      ["create_job", { ...LIST, numbers: [...LIST.numbers].reverse() }],
      ["create_job", { ...LIST, numbers: LIST.numbers.slice(0, 149) }],
      ["create_job", { ...LIST, checks: ["spam", "carrier"] }],
      ["create_job", { ...LIST, emails: ["deliverable@example.com"] }],
      ["create_job", { ...LIST, idempotency_key: "run-2" }],
      ["lookup", { numbers: LIST.numbers.slice(0, 100), checks: ["spam"] }],
    ];
    for (const [tool, args] of variants) expectInvalid(await mcp.call(tool, { ...args, ...confirmFields(q) }), "arguments_changed");
    expect(recorder.requests).toEqual([]);
    expect(await jobsOf(k.accountId)).toEqual(before);

    // The token was not spent by those refusals: it still confirms its own call, once.
    const ok = await mcp.call("create_job", { ...LIST, ...confirmFields(q) });
    expect(ok.isError).toBe(false);
    expect(ok.data.cost).toEqual({ max_cost: "0.00", max_cost_sent: "0.00", confirmed: true, currency: "USD" });
    expect(bodies(recorder.requests, "POST", "/v1/jobs")).toEqual([expect.objectContaining({ max_cost: { amount: "0.00" } })]);
  });

  it("the happy path goes through once; the same token again is already_used, even for the very same call", async () => {
    const list = { numbers: numbersList(120, 4000), emails: ["deliverable@example.com"], checks: ["spam", "email"] };
    const q = await quote(mcp, "create_job", list);
    expect(Date.parse(q.expires_at) - Date.now()).toBeGreaterThan(4 * 60_000); // default lifetime: 5 minutes
    expect(Date.parse(q.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    const created = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    expect(created.isError).toBe(false);
    expect(created.data.job).toMatchObject({ status: "completed", progress: { total: 121 } });
    recorder.requests.length = 0;
    const again = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    expectInvalid(again, "already_used");
    expect(recorder.requests).toEqual([]);
    expect((await jobsOf(k.accountId)).filter((id) => id === created.data.job.id)).toHaveLength(1);
  });

  it("two calls racing with one token: exactly one goes ahead", async () => {
    const list = { numbers: numbersList(101, 6000), checks: ["spam"] };
    const q = await quote(mcp, "create_job", list);
    const [a, b] = await Promise.all([mcp.call("create_job", { ...list, ...confirmFields(q) }), mcp.call("create_job", { ...list, ...confirmFields(q) })]);
    const outcomes = [a, b].map((r) => (r.isError ? r.data.error.reason : "created"));
    // The loser is refused while the winner's call runs (in_use) or after it is done (already_used).
    expect(outcomes).toContain("created");
    expect(outcomes.filter((o) => o !== "created")).toEqual([expect.stringMatching(/^(in_use|already_used)$/)]);
    expect(sent("POST", "/v1/jobs")).toBe(1);
  });

  it("estimate_job's token fits create_job with exactly its numbers, emails and checks", async () => {
    const list = { numbers: numbersList(130, 7000), checks: ["spam"] };
    const est = await mcp.call("estimate_job", list);
    const c = est.data.confirmation;
    expect(c).toMatchObject({ required: true, confirm_max_cost: "0.00", confirmation_token: expect.stringMatching(/^cfm1\.create_job\./) });
    expectInvalid(await mcp.call("create_job", { ...list, idempotency_key: "mine", confirm_max_cost: c.confirm_max_cost, confirmation_token: c.confirmation_token }), "arguments_changed");
    const created = await mcp.call("create_job", { ...list, confirm_max_cost: c.confirm_max_cost, confirmation_token: c.confirmation_token });
    expect(created.isError).toBe(false);
    // Not needed, no token.
    expect((await mcp.call("estimate_job", { numbers: numbersList(3), checks: ["spam"] })).data.confirmation).toMatchObject({ required: false, confirm_max_cost: null, confirmation_token: null, expires_at: null });
  });
});

describe("tokens cannot be made up, altered or kept", () => {
  it("an altered token (a lower quote, another tool, a changed signature) or garbage is invalid_token", async () => {
    const q = await quote(mcp, "create_job", LIST);
    const parts = q.confirmation_token.split(".");
    expect(parts).toHaveLength(7);
    const swap = (i: number, value: string) => parts.map((p, j) => (j === i ? value : p)).join(".");
    const forged = [
      swap(2, "1"), // the quote
      swap(3, String(Date.now() + 3_600_000)), // a later expiry
      swap(6, `${parts[6]!.slice(0, -2)}AA`), // the signature
      "cfm1.create_job.0.99999999999999.nonce.args.mac",
      "not-a-token",
    ];
    recorder.requests.length = 0;
    for (const token of forged) expectInvalid(await mcp.call("create_job", { ...LIST, confirm_max_cost: "0.00", confirmation_token: token }), "invalid_token");
    expect(recorder.requests).toEqual([]);
  });

  it("a token from another server process (a restart) is invalid_token: the signing key lives only in the process", async () => {
    const q = await quote(mcp, "create_job", LIST);
    const other = await session({ SVC_API_KEY: k.key });
    const r = await other.call("create_job", { ...LIST, ...confirmFields(q) });
    expectInvalid(r, "invalid_token");
    expect(r.data.error.message).toContain("restarted");
  });

  it("an expired token is refused (expired); the lifetime is SVC_MCP_CONFIRM_TTL_SECONDS", async () => {
    const short = await session({ SVC_API_KEY: k.key, SVC_MCP_CONFIRM_TTL_SECONDS: "1" });
    const q = await quote(short, "create_job", LIST);
    const lapses = Date.parse(q.expires_at) - Date.now();
    expect(lapses).toBeLessThanOrEqual(1_000);
    await new Promise((r) => setTimeout(r, Math.max(0, lapses) + 50)); // until the instant the answer said
    recorder.requests.length = 0;
    const r = await short.call("create_job", { ...LIST, ...confirmFields(q) });
    expectInvalid(r, "expired");
    expect(r.data.error.message).toContain("valid for 1 second)");
    expect(recorder.requests).toEqual([]);
  });
});

describe("the approved amount against the quote (agent key, live prices)", () => {
  it("confirm_max_cost below the quote is cost_limit_exceeded with nothing sent, and the token stays good for the quoted amount", async () => {
    const agent = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write"] });
    const s = await session({ SVC_API_KEY: agent.key, SVC_MCP_CONFIRM_ABOVE: "0.10" });
    const args = { numbers: numbersList(100, 8000), checks: ["spam"], wait: 0 }; // 100 × 0.002 = 0.20 USD
    const q = await quote(s, "lookup", args);
    expect(q.confirm_max_cost).toBe("0.20");
    recorder.requests.length = 0;
    const under = await s.call("lookup", { ...args, confirm_max_cost: "0.15", confirmation_token: q.confirmation_token });
    expect(under.isError).toBe(true);
    expect(under.data.error).toMatchObject({ code: "cost_limit_exceeded", status: null, param: "confirm_max_cost", max_cost: "0.20", max_cost_sent: "0.15" });
    expect(under.data.error.message).toContain('confirm_max_cost: "0.20"');
    expect(recorder.requests).toEqual([]);

    // More than the quote is the user's call to make; the request carries it as max_cost.
    const over = await s.call("lookup", { ...args, confirm_max_cost: "0.25", confirmation_token: q.confirmation_token });
    expect(over.isError).toBe(false);
    expect(over.data.cost).toEqual({ max_cost: "0.20", max_cost_sent: "0.25", confirmed: true, currency: "USD" });
    expect(bodies(recorder.requests, "POST", "/v1/lookup")).toEqual([expect.objectContaining({ max_cost: { amount: "0.25" } })]);
  });
});

describe("a token is spent once its call has a definitive outcome, and kept for the identical repeat otherwise", () => {
  const jobKeys = () => recorder.requests.filter((r) => r.method === "POST" && r.path === "/v1/jobs").map((r) => r.headers["idempotency-key"]);

  it("create_job whose answers are lost (the job was created): the token is kept, the identical repeat returns the same job under the same key, then the token is spent", async () => {
    const list = { numbers: numbersList(110, 2000), checks: ["spam"] };
    const q = await quote(mcp, "create_job", list);
    const before = await jobsOf(k.accountId);
    recorder.requests.length = 0;
    const loss = recorder.loseAnswers("POST", "/v1/jobs");
    let lost;
    try {
      lost = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    } finally {
      loss.stop();
    }
    expect(lost.isError).toBe(true);
    expect(lost.data.error).toMatchObject({ code: "connection_error", retryable: true, confirmation_token_kept: true });
    expect(lost.data.error.message).toContain("The confirmation_token is still good for this call");
    expect(loss.lost).toBeGreaterThanOrEqual(1); // the SDK's own retries met the same fault
    const created = (await jobsOf(k.accountId)).filter((id) => !before.includes(id));
    expect(created).toHaveLength(1); // the API did the work; only its answer was lost

    const repeat = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    expect(repeat.isError).toBe(false);
    expect(repeat.data).toMatchObject({ replayed: true, job: { id: created[0] }, cost: { confirmed: true } });
    expect(new Set(jobKeys()).size).toBe(1); // every attempt of both calls: one derived Idempotency-Key
    expect(jobKeys()[0]).toMatch(/^mcp-job-/);
    expect((await jobsOf(k.accountId)).filter((id) => !before.includes(id))).toEqual(created);

    recorder.requests.length = 0;
    expectInvalid(await mcp.call("create_job", { ...list, ...confirmFields(q) }), "already_used");
    expect(recorder.requests).toEqual([]);
  });

  it("a confirmed lookup whose answers are lost: kept for the identical repeat only (another amount is amount_changed), which replays the first lookup: one lookup made", async () => {
    const agent = await accountWithKey(gw.store, gw.env.keyHashSecret, { mode: "agent", scopes: ["lookup:write"] });
    const s = await session({ SVC_API_KEY: agent.key, SVC_MCP_CONFIRM_ABOVE: "0.10" });
    const args = { numbers: numbersList(100, 3000), checks: ["spam"], wait: 0 }; // 100 × 0.002 = 0.20 USD
    const q = await quote(s, "lookup", args);
    recorder.requests.length = 0;
    const loss = recorder.loseAnswers("POST", "/v1/lookup");
    let lost;
    try {
      lost = await s.call("lookup", { ...args, ...confirmFields(q) });
    } finally {
      loss.stop();
    }
    expect(lost.data.error).toMatchObject({ code: "connection_error", retryable: true, confirmation_token_kept: true });
    const lookups = async () => (await gw.store.pool.query(`SELECT id FROM lookups WHERE account_id = $1`, [agent.accountId])).rows.map((r: { id: string }) => r.id);
    const done = await lookups();
    expect(done).toHaveLength(1);

    // The same token with more money approved would be another request (another max_cost): refused, nothing sent.
    recorder.requests.length = 0;
    const more = await s.call("lookup", { ...args, confirm_max_cost: "0.25", confirmation_token: q.confirmation_token });
    expectInvalid(more, "amount_changed", "confirm_max_cost");
    expect(more.data.error.message).toContain('confirm_max_cost: "0.20"');
    expect(recorder.requests).toEqual([]);

    const repeat = await s.call("lookup", { ...args, ...confirmFields(q) });
    expect(repeat.isError).toBe(false);
    expect(repeat.data).toMatchObject({ replayed: true, lookup: { id: done[0] } });
    const keys = recorder.requests.filter((r) => r.method === "POST").map((r) => r.headers["idempotency-key"]);
    expect(keys).toEqual([expect.stringMatching(/^mcp-lookup-/)]);
    expect(await lookups()).toEqual(done);
    expectInvalid(await s.call("lookup", { ...args, ...confirmFields(q) }), "already_used");
  });

  it("while its call runs, a second call with the token is refused (in_use) without sending anything; once it is done, already_used", async () => {
    const list = { numbers: numbersList(105, 5000), checks: ["spam"] };
    const q = await quote(mcp, "create_job", list);
    const held = recorder.hold("POST", "/v1/jobs");
    const first = mcp.call("create_job", { ...list, ...confirmFields(q) });
    await held.arrived;
    recorder.requests.length = 0;
    const second = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    expectInvalid(second, "in_use");
    expect(recorder.requests).toEqual([]);
    held.release();
    expect((await first).isError).toBe(false);
    expectInvalid(await mcp.call("create_job", { ...list, ...confirmFields(q) }), "already_used");
  });

  it("a refusal the API marks not retryable spends the token: the identical repeat is already_used", async () => {
    const list = { numbers: numbersList(102, 9000), checks: ["spam"], webhook_endpoint_id: "we_doesnotexist" };
    const q = await quote(mcp, "create_job", list);
    const refused = await mcp.call("create_job", { ...list, ...confirmFields(q) });
    expect(refused.data.error).toMatchObject({ code: "invalid_request", retryable: false, param: "webhook_endpoint_id" });
    expect(refused.data.error.confirmation_token_kept).toBeUndefined();
    expect(sent("POST", "/v1/jobs")).toBe(1);
    recorder.requests.length = 0;
    expectInvalid(await mcp.call("create_job", { ...list, ...confirmFields(q) }), "already_used");
    expect(recorder.requests).toEqual([]);
  });
});
