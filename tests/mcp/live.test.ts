import { spawnSync } from "node:child_process";
import path from "node:path";
import { reconcileAccount } from "@svc/store";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { eventually, spacedNumbers, startLiveWorkers, type LiveWorkers } from "../support/live";
import { bodies, startMcp, startRecorder, type McpSession, type Recorder } from "./harness";
import { routesKey } from "@svc/sources";

/**
 * Money: the MCP server with live and agent keys at the real prices (number.spam
 * 0.002, whatsapp 0.004, carrier 0.001, signal.registered 0.004 USD), against the
 * real gateway with a real check-worker and billing-ledger. Keys are issued with
 * the operator's CLI exactly as docs/mcp.md shows.
 */
const ADMIN = path.resolve(__dirname, "..", "..", "packages", "admin", "dist", "cli.js");
let gw: TestGateway;
let workers: LiveWorkers;
let recorder: Recorder;
const sessions: McpSession[] = [];
const numbers = spacedNumbers(11);

beforeAll(async () => {
  gw = await startTestGateway();
  [workers, recorder] = await Promise.all([startLiveWorkers(gw.env), startRecorder(gw.url)]);
  await eventually(async () => gw.deps.redis.get(routesKey(gw.env.redisPrefix, "whatsapp")), 15_000, "routes advertised");
}, 60_000);
afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => undefined);
  await workers?.stop();
  await recorder?.close();
  await gw?.close();
});
beforeEach(() => {
  recorder.requests.length = 0;
  workers.sim.settings.latencyMs = 0;
});

/** `npm run admin -- …`, as an operator runs it. */
function admin(...args: string[]): Record<string, any> {
  const res = spawnSync(process.execPath, [ADMIN, ...args], {
    cwd: "/",
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: gw.env.databaseUrl, KEY_HASH_SECRET: gw.env.keyHashSecret },
    encoding: "utf8",
    timeout: 20_000,
  });
  if (res.status !== 0) throw new Error(`admin ${args.join(" ")} failed: ${res.stderr}`);
  return JSON.parse(res.stdout);
}

/** An account with a balance and one key: `account create`, then `key create`. */
function issue(mode: "agent" | "live", balance: string, flags: string[] = []): { key: string; accountId: string } {
  const account = admin("account", "create", "--name", "Agent Co", "--balance", balance);
  const key = admin("key", "create", "--account", account.id, "--mode", mode, ...flags);
  return { key: key.key, accountId: account.id };
}

async function mcpWith(key: string, extra: Record<string, string> = {}): Promise<McpSession> {
  const s = await startMcp({ SVC_API_KEY: key, SVC_BASE_URL: recorder.url, ...extra });
  sessions.push(s);
  return s;
}

const sent = (method: string, p: string) => recorder.requests.filter((q) => q.method === method && q.path.split("?")[0] === p).length;
const settled = (accountId: string) =>
  eventually(async () => {
    const r = await reconcileAccount(gw.store.pool, accountId);
    return r.reservedMicros === 0n ? r : undefined;
  }, 20_000, "settlement");

const AGENT_SCOPES = ["--scopes", "lookup:write,jobs:write,jobs:read,account:read", "--daily-spend-cap", "5.00"];

describe("lookup: the confirmation round trip with real money", () => {
  it("above the threshold: confirmation_required with amount and count; a lower confirm_max_cost is refused; the approved amount proceeds and is the request's max_cost", async () => {
    const agent = issue("agent", "10", AGENT_SCOPES);
    const mcp = await mcpWith(agent.key, { SVC_MCP_CONFIRM_ABOVE: "0.25" });
    const args = { numbers: numbers(60), checks: ["spam", "whatsapp"], wait: 15 };

    // 60 numbers × (0.002 + 0.004) = 0.36 USD > 0.25: nothing is sent but the catalog read.
    const first = await mcp.call("lookup", args);
    expect(first.isError).toBe(true);
    expect(first.data.error).toMatchObject({
      code: "confirmation_required",
      reasons: ["max_cost_above_threshold"],
      max_cost: "0.36",
      currency: "USD",
      identifiers: 60,
      numbers: 60,
      emails: 0,
      checks_total: 120,
      livemode: true,
      threshold: "0.25",
      confirm: { arguments: { confirm_max_cost: "0.36", confirmation_token: expect.stringMatching(/^cfm1\.lookup\.360000\./) }, single_use: true },
    });
    expect(first.data.error.message).toMatch(/0\.36 USD.*0\.25 USD/);
    expect(sent("POST", "/v1/lookup")).toBe(0);
    const token = first.data.error.confirm.arguments.confirmation_token as string;

    // Approved less than it was quoted: refused by the server, still nothing sent; the token stays good.
    const under = await mcp.call("lookup", { ...args, confirm_max_cost: "0.30", confirmation_token: token });
    expect(under.isError).toBe(true);
    expect(under.data.error).toMatchObject({ code: "cost_limit_exceeded", status: null, max_cost: "0.36", max_cost_sent: "0.30", param: "confirm_max_cost" });
    expect(sent("POST", "/v1/lookup")).toBe(0);

    // The approved amount with the token: sent as max_cost, reserved, checked by the real workers, billed.
    const done = await mcp.call("lookup", { ...args, confirm_max_cost: "0.36", confirmation_token: token });
    expect(done.isError).toBe(false);
    expect(done.data.cost).toEqual({ max_cost: "0.36", max_cost_sent: "0.36", confirmed: true, currency: "USD" });
    expect(bodies(recorder.requests, "POST", "/v1/lookup")).toEqual([expect.objectContaining({ max_cost: { amount: "0.36" } })]);
    expect(done.data.lookup).toMatchObject({ status: "completed", livemode: true, checks: ["number.spam", "whatsapp"] });
    expect(done.data.lookup.rows).toHaveLength(60);
    const billed = done.data.lookup.billed_checks as number;
    expect(billed).toBeGreaterThan(60);
    const r = await settled(agent.accountId);
    expect(r.balanced).toBe(true);
    expect(r.ledgerBalanceMicros).toBeLessThan(10_000_000n);
    expect(r.ledgerBalanceMicros).toBeGreaterThanOrEqual(10_000_000n - 360_000n);

    const account = await mcp.call("get_account");
    expect(account.data.limits.key_daily_spend_cap).toMatchObject({ limit: "5.00", resets_at: expect.stringMatching(/T00:00:00/) });
    expect(account.data.key).toEqual({ kind: "agent", confirm_above: "0.25" });
  });
});

describe("create_job: the confirmation round trip at the default threshold", () => {
  const checks = ["spam", "whatsapp", "carrier", "signal.registered"];

  it("1.10 USD for 100 numbers needs confirmation; 1.00 is below the quote and refused; 1.10 with the token creates the job with max_cost 1.10, which then runs to the end", async () => {
    const agent = issue("agent", "10", AGENT_SCOPES);
    const mcp = await mcpWith(agent.key);
    const args = { numbers: numbers(100), checks };
    workers.sim.settings.latencyMs = 3000; // vendor answers take 3 s (timeout 5 s): the job runs longer than one 2 s poll, so there is progress to report

    const first = await mcp.call("create_job", args);
    expect(first.data.error).toMatchObject({ code: "confirmation_required", reasons: ["max_cost_above_threshold"], max_cost: "1.10", identifiers: 100, numbers: 100, threshold: "1.00" });
    expect(sent("POST", "/v1/jobs")).toBe(0);

    // Approved less than the quote the token carries: refused before anything goes out.
    const token = first.data.error.confirm.arguments.confirmation_token as string;
    const estimates = sent("POST", "/v1/jobs/estimate");
    const refused = await mcp.call("create_job", { ...args, confirm_max_cost: "1.00", confirmation_token: token });
    expect(refused.isError).toBe(true);
    expect(refused.data.error).toMatchObject({ code: "cost_limit_exceeded", status: null, retryable: false, param: "confirm_max_cost", max_cost: "1.10", max_cost_sent: "1.00" });
    expect(refused.data.error.message).toContain("nothing sent or charged");
    expect(sent("POST", "/v1/jobs/estimate")).toBe(estimates);
    expect(sent("POST", "/v1/jobs")).toBe(0);
    expect((await gw.store.pool.query(`SELECT 1 FROM jobs WHERE account_id = $1`, [agent.accountId])).rowCount).toBe(0);

    const created = await mcp.call("create_job", { ...args, confirm_max_cost: "1.10", confirmation_token: token });
    expect(created.isError).toBe(false);
    expect(created.data.cost).toEqual({ max_cost: "1.10", max_cost_sent: "1.10", confirmed: true, currency: "USD" });
    expect(bodies(recorder.requests, "POST", "/v1/jobs")).toEqual([expect.objectContaining({ max_cost: { amount: "1.10" } })]);
    const job = created.data.job;
    expect(job).toMatchObject({ livemode: true, finished: false, cost: { max_cost: "1.10" }, progress: { total: 100, checks_total: 400 } });
    expect(job.next).toContain("get_job");

    // Followed to the end with get_job's long poll; the client asked for progress notifications.
    const progress: Array<{ progress: number; total?: number }> = [];
    let state = job;
    for (let i = 0; i < 6 && !state.finished; i += 1) {
      state = (await mcp.call("get_job", { id: job.id, wait: 30 }, { onprogress: (p) => progress.push(p) })).data.job;
    }
    expect(state).toMatchObject({ status: "completed", finished: true, progress: { done: 400, percent: 100 } });
    expect(progress.length).toBeGreaterThan(0);
    for (const [i, p] of progress.entries()) {
      expect(p.total).toBe(400);
      expect(p.progress).toBeLessThanOrEqual(400);
      if (i > 0) expect(p.progress).toBeGreaterThanOrEqual(progress[i - 1]!.progress);
    }

    const page = await mcp.call("get_job_results", { id: job.id, limit: 10 });
    expect(page.data.rows).toHaveLength(10);
    expect(page.data.rows[0].checks.map((c: { service: string }) => c.service)).toEqual(["number.spam", "whatsapp", "carrier", "signal.registered"]);
    expect(page.data.has_more).toBe(true);

    // Settled by the ledger: what was charged stays within the approved 1.10, the rest released.
    expect((await settled(agent.accountId)).balanced).toBe(true);
    const final = (await mcp.call("get_job", { id: job.id })).data.job;
    expect(final.cost.reserved).toMatch(/^0\.0+$/);
    expect(Number(final.cost.charged)).toBeGreaterThan(0);
    expect(Number(final.cost.charged)).toBeLessThanOrEqual(1.1);
  }, 90_000);
});

describe("the API itself refuses anything dearer than the max_cost the server sent", () => {
  /** The account's own price for a check, set with the operator CLI, and seen by the API before the test goes on. */
  async function setPrice(accountId: string, key: string, check: string, amount: string) {
    admin("price", "set", "--check", check, "--amount", amount, "--account", accountId);
    await eventually(async () => {
      const res = await fetch(`${gw.url}/v1/services`, { headers: { Authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { data: Array<{ code: string; prices: { live: { amount: string } } }> };
      return body.data.find((s) => s.code === check)?.prices.live.amount === amount;
    }, 10_000, "new price visible");
  }

  it("create_job: the price rises between the confirmed estimate and the creation → 402 cost_limit_exceeded as a tool error, no job, nothing reserved", async () => {
    const agent = issue("agent", "10", AGENT_SCOPES);
    const mcp = await mcpWith(agent.key);
    const list = { numbers: numbers(100), checks: ["spam", "whatsapp", "carrier", "signal.registered"] };
    const quoted = await mcp.call("create_job", list);
    expect(quoted.data.error).toMatchObject({ code: "confirmation_required", max_cost: "1.10" });
    const args = { ...list, ...quoted.data.error.confirm.arguments };
    const held = recorder.hold("POST", "/v1/jobs");
    const call = mcp.call("create_job", args);
    await held.arrived; // the server decided 1.10 fits (estimate at 0.002 for spam) and sent the job
    await setPrice(agent.accountId, agent.key, "number.spam", "0.003"); // now 1.20
    held.release();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.data.error).toMatchObject({ code: "cost_limit_exceeded", status: 402, param: "max_cost.amount", max_cost_sent: "1.10", request_id: expect.stringMatching(/^req_/) });
    expect(r.data.error.message).toContain("(1.20 USD)");
    expect(bodies(recorder.requests, "POST", "/v1/jobs")).toEqual([expect.objectContaining({ max_cost: { amount: "1.10" } })]);
    expect((await gw.store.pool.query(`SELECT 1 FROM jobs WHERE account_id = $1`, [agent.accountId])).rowCount).toBe(0);
    expect((await reconcileAccount(gw.store.pool, agent.accountId)).reservedMicros).toBe(0n);
  });

  it("lookup without confirmation: the price rises past the threshold after the server computed 0.20 → refused by the API at the threshold (1.00)", async () => {
    const agent = issue("agent", "10", AGENT_SCOPES);
    const mcp = await mcpWith(agent.key);
    const held = recorder.hold("POST", "/v1/lookup");
    const call = mcp.call("lookup", { numbers: numbers(100), checks: ["spam"] }); // 100 × 0.002 = 0.20: no confirmation needed
    await held.arrived;
    await setPrice(agent.accountId, agent.key, "number.spam", "0.02"); // now 2.00
    held.release();
    const r = await call;
    expect(r.data.error).toMatchObject({ code: "cost_limit_exceeded", status: 402, max_cost_sent: "1.00" });
    expect(r.data.error.message).toContain("without confirm_max_cost and confirmation_token to get the current amount");
    expect(bodies(recorder.requests, "POST", "/v1/lookup")).toEqual([expect.objectContaining({ max_cost: { amount: "1.00" } })]);

    // Asked again, the server sees the new price and asks for confirmation of 2.00.
    const again = await mcp.call("lookup", { numbers: numbers(100), checks: ["spam"] });
    expect(again.data.error).toMatchObject({ code: "confirmation_required", max_cost: "2.00" });
  });
});

describe("an agent key's daily spend cap", () => {
  it("spend_cap_reached ends the agent's spending for the day, and the result says so; free tools still answer", async () => {
    const agent = issue("agent", "10", ["--scopes", "lookup:write,account:read", "--daily-spend-cap", "0.01"]);
    const mcp = await mcpWith(agent.key);
    const ok = await mcp.call("lookup", { numbers: numbers(5), checks: ["spam"] }); // 0.01: exactly the cap
    expect(ok.isError).toBe(false);
    const refused = await mcp.call("lookup", { numbers: numbers(1), checks: ["spam"] });
    expect(refused.isError).toBe(true);
    const e = refused.data.error;
    expect(e).toMatchObject({ code: "spend_cap_reached", status: 429, retryable: false, request_id: expect.stringMatching(/^req_/) });
    expect(e.message).toContain("spending is over for today");
    expect(e.message).toContain("00:00 UTC");
    expect(e.message).toContain("do not retry them today");
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(Math.abs(Date.parse(e.spending_resumes_at) - midnight.getTime())).toBeLessThan(5_000);

    const account = await mcp.call("get_account");
    expect(account.isError).toBe(false);
    expect(account.data.limits.key_daily_spend_cap).toMatchObject({ limit: "0.01", used: "0.01", left: "0.00" });
    expect((await mcp.call("list_services")).data.price_mode).toBe("live");
    expect(mcp.transcript() + mcp.stderr()).not.toContain(agent.key);
  });
});

describe("a repeated create_job never charges twice", () => {
  it("a refusal stored for the derived key (insufficient_balance) does not block the same call after a top-up; repeated again, it is the same job", async () => {
    const agent = issue("agent", "0.10", AGENT_SCOPES);
    const mcp = await mcpWith(agent.key);
    const args = { numbers: numbers(50), checks: ["whatsapp"] }; // 0.20 USD
    const refused = await mcp.call("create_job", args);
    expect(refused.data.error).toMatchObject({ code: "insufficient_balance", status: 402 });

    admin("balance", "topup", "--account", agent.accountId, "--amount", "1", "--reason", "test");
    const created = await mcp.call("create_job", args);
    expect(created.isError).toBe(false);
    expect(created.data.replayed).toBe(false);
    const again = await mcp.call("create_job", args);
    expect(again.data).toMatchObject({ replayed: true, job: { id: created.data.job.id } });
    expect((await gw.store.pool.query(`SELECT id FROM jobs WHERE account_id = $1`, [agent.accountId])).rows).toEqual([{ id: created.data.job.id }]);
    // Every POST /v1/jobs went out under a key derived from the request, never a random one.
    const keys = recorder.requests.filter((q) => q.method === "POST" && q.path === "/v1/jobs").map((q) => q.headers["idempotency-key"]);
    expect(keys).toHaveLength(5); // refused; replayed refusal + created; replayed refusal + replayed job
    expect(new Set(keys).size).toBe(2);
    for (const k of keys) expect(k).toMatch(/^mcp-job-[0-9a-f]{48}$/);
    await settled(agent.accountId);
  });
});

describe("live keys", () => {
  it("work too, with a warning that an agent key is the safer choice; the key is never shown", async () => {
    const live = issue("live", "5");
    const mcp = await mcpWith(live.key);
    const r = await mcp.call("lookup", { numbers: numbers(2), checks: ["carrier"] });
    expect(r.data.lookup).toMatchObject({ status: "completed", livemode: true });
    expect(r.data.cost).toMatchObject({ max_cost: "0.002", max_cost_sent: "1.00" });
    expect(mcp.stderr()).toContain("running with a live key");
    expect(mcp.stderr() + mcp.transcript()).not.toContain(live.key);
    await settled(live.accountId);
  });
});
