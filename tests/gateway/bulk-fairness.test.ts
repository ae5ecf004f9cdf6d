import { readdirSync, readFileSync } from "node:fs";
import type request from "supertest";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import { startTestGateway, type TestGateway } from "../support/gateway";
import { usNumbers } from "../jobs/helpers";

/**
 * Bulk bodies are read, validated and planned on intake threads shared fairly
 * between accounts: one account's flood of big estimates queues behind itself and
 * is turned away (503, retryable) when its share is full; another account's
 * request goes next, not after the flood.
 */
let gw: TestGateway;
beforeAll(async () => {
  // No waiting request is turned away for waiting too long here: on a loaded machine the
  // low-priority intake thread can take longer than the default 10 s per 50,000 rows.
  gw = await startTestGateway({ config: { INTAKE_THREADS: "1", INTAKE_QUEUE_PER_ACCOUNT: "1", INTAKE_THREAD_NICE: "10", INTAKE_MAX_WAIT_MS: "60000" } });
});
afterAll(async () => gw.close());

const big = { numbers: usNumbers(50_000, 3), checks: ["number.spam"] };

/** Resolves when the intake threads show this state (they are the gateway's own, in this process). */
async function intakeState(want: { running: number; queued: number }): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const { running, queued } = gw.deps.bulk.stats;
    if (running === want.running && queued === want.queued) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`intake never reached ${JSON.stringify(want)}: ${JSON.stringify(gw.deps.bulk.stats)}`);
}

function estimate(key: TestKey, body: object, finished: string[], name: string): Promise<request.Response> {
  return gw
    .http()
    .post("/v1/jobs/estimate")
    .set(bearer(key.key))
    .send(body)
    .then((res) => {
      finished.push(name);
      return res;
    });
}

describe("fair intake of bulk requests", () => {
  it("serves another account before a flooding account's queued estimates, and refuses the flood past its share", async () => {
    const flooder = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const other = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const finished: string[] = [];

    const first = estimate(flooder, big, finished, "flood-1");
    await intakeState({ running: 1, queued: 0 });
    const second = estimate(flooder, big, finished, "flood-2");
    await intakeState({ running: 1, queued: 1 });
    // The flooding account's share (1 running + 1 waiting) is full: turned away at once, retryably.
    const third = await estimate(flooder, big, finished, "flood-3");
    expect(third.status).toBe(503);
    expect(third.body.error).toMatchObject({ code: "temporarily_unavailable", retryable: true, status: 503 });
    expect(Number(third.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(third.headers["x-request-id"]).toBe(third.body.error.request_id);

    // Another account has room, and its estimate runs next: before the flood's waiting one.
    const theirs = estimate(other, { numbers: usNumbers(200, 5), checks: ["number.spam"] }, finished, "other");
    await intakeState({ running: 1, queued: 2 });
    const [r1, r2, rOther] = await Promise.all([first, second, theirs]);
    expect([r1.status, r2.status, rOther.status]).toEqual([200, 200, 200]);
    expect(rOther.body.rows).toMatchObject({ total: 200, valid: 200 });
    expect(r2.body.rows).toMatchObject({ total: 50_000 });
    expect(finished).toEqual(["flood-3", "flood-1", "other", "flood-2"]);
    expect(gw.deps.bulk.stats).toEqual({ running: 0, queued: 0, tenants: 0 });
  }, 120_000);

  it("answers the event loop's own requests while the intake threads are busy", async () => {
    const flooder = await accountWithKey(gw.store, gw.env.keyHashSecret);
    const finished: string[] = [];
    const flood = estimate(flooder, big, finished, "flood");
    await intakeState({ running: 1, queued: 0 });
    const health = await gw.http().get("/v1/health");
    finished.push("health");
    expect(health.status).toBe(200);
    expect((await flood).status).toBe(200);
    expect(finished).toEqual(["health", "flood"]);
  });

  it("runs the intake threads under SCHED_IDLE, niced, below the event loop", async () => {
    // Linux keeps a niceness and a policy per thread (fields 19 and 41 of /proc/<pid>/task/<tid>/stat).
    const stat = (tid: string) => readFileSync(`/proc/self/task/${tid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
    const own = stat(String(process.pid));
    const SCHED_IDLE = "5";
    expect(await gw.deps.bulk.priority()).toBe("idle");
    const intake = readdirSync("/proc/self/task").map(stat).filter((f) => f[38] === SCHED_IDLE);
    expect(intake.length).toBeGreaterThanOrEqual(1);
    for (const f of intake) expect(Number(f[16])).toBe(Number(own[16]) + 10);
    expect(own[38]).toBe("0");
  });
});
