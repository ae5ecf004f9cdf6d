import { createTestEnv, type TestEnv } from "../../../tests/support/env";
import { redisModes } from "../../../tests/support/redis-modes";
import { createRedis, waitForRedis, type RedisClient } from "./connection";
import { CompletionWaiter, completionChannel, lookupAnswerText, MAX_ANSWER_NOTICE_BYTES, publishCompletion, readLookupAnswer } from "./notifier";

/**
 * CompletionWaiter over real Redis sharded pub/sub, on one server and on a cluster;
 * notices are published from a separate connection.
 */

let env: TestEnv;
let publisher: RedisClient;
let subscriber: RedisClient;
let waiter: CompletionWaiter;
let currentUrl: () => string;
const extra: RedisClient[] = [];
const extraWaiters: CompletionWaiter[] = [];

const LONG = 10_000;
/** "Promptly": far below LONG, generous for a loaded CI machine. */
const PROMPT = 2_000;

beforeAll(async () => {
  env = await createTestEnv();
});

/** Publisher, subscriber and waiters on the Redis of one describe.each mode, closed after it. */
function connectTo(urlOf: () => string): void {
  beforeAll(async () => {
    currentUrl = urlOf;
    publisher = createRedis(urlOf(), "producer", "notifier-test-pub");
    subscriber = createRedis(urlOf(), "subscriber", "notifier-test-sub");
    await Promise.all([waitForRedis(publisher), waitForRedis(subscriber)]);
    waiter = new CompletionWaiter(subscriber, env.redisPrefix);
    await waiter.start();
    // A second waiter on the same connection subscribes it to another prefix's channel too,
    // so `waiter` really receives (and must ignore) that channel's notices.
    const neighbour = new CompletionWaiter(subscriber, `${env.redisPrefix}:elsewhere`);
    extraWaiters.push(neighbour);
    await neighbour.start();
  });

  afterAll(async () => {
    waiter?.close();
    for (const w of extraWaiters.splice(0)) w.close();
    await Promise.all([publisher, subscriber, ...extra.splice(0)].filter(Boolean).map((r) => r.quit().catch(() => undefined)));
  });
}

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await p;
  return { value, ms: performance.now() - t0 };
}

async function freshWaiter(): Promise<CompletionWaiter> {
  const sub = createRedis(currentUrl(), "subscriber", "notifier-test-sub2");
  extra.push(sub);
  await waitForRedis(sub);
  const w = new CompletionWaiter(sub, env.redisPrefix);
  extraWaiters.push(w);
  await w.start();
  return w;
}

describe("completionChannel", () => {
  it("is namespaced by the prefix", () => {
    expect(completionChannel("t:abc")).toBe("t:abc:completed");
  });
});

describe.each(redisModes())("on %s", (_mode, urlOf) => {
  connectTo(urlOf);

  describe("CompletionWaiter", () => {
    it("resolves true promptly when publishCompletion is called for its id from another connection", async () => {
      const pending = timed(waiter.wait("lkp_Notified0001", LONG));
      expect(waiter.size).toBe(1);
      await publishCompletion(publisher, env.redisPrefix, "lkp_Notified0001");
      const { value, ms } = await pending;
      expect(value).toBe(true);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("wakes every waiter of the id with one notice", async () => {
      const a = waiter.wait("lkp_Shared000001", LONG);
      const b = waiter.wait("lkp_Shared000001", LONG);
      await publishCompletion(publisher, env.redisPrefix, "lkp_Shared000001");
      const { value, ms } = await timed(Promise.all([a, b]));
      expect(value).toEqual([true, true]);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("resolves false at the timeout when nothing is announced for its id", async () => {
      const pending = timed(waiter.wait("lkp_Quiet0000001", 400));
      // Notices for another id, and for the same id under another prefix, do not wake it.
      await publishCompletion(publisher, env.redisPrefix, "lkp_Other0000001");
      await publishCompletion(publisher, `${env.redisPrefix}:elsewhere`, "lkp_Quiet0000001");
      const { value, ms } = await pending;
      expect(value).toBe(false);
      expect(ms).toBeGreaterThanOrEqual(390);
      expect(ms).toBeLessThan(400 + PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("resolves false at once for a non-positive wait", async () => {
      const { value, ms } = await timed(waiter.wait("lkp_Zero00000001", 0));
      expect(value).toBe(false);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("resolves early (false) when the AbortSignal aborts", async () => {
      const controller = new AbortController();
      const pending = timed(waiter.wait("lkp_Aborted00001", LONG, controller.signal));
      expect(waiter.size).toBe(1);
      controller.abort();
      const { value, ms } = await pending;
      expect(value).toBe(false);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("resolves at once (false) for a signal that is already aborted", async () => {
      const { value, ms } = await timed(waiter.wait("lkp_PreAborted01", LONG, AbortSignal.abort()));
      expect(value).toBe(false);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("close() wakes held waits promptly and resolves later waits immediately", async () => {
      const w = await freshWaiter();
      const held = timed(w.wait("lkp_Held00000001", LONG));
      expect(w.size).toBe(1);
      w.close();
      const { ms } = await held;
      expect(ms).toBeLessThan(PROMPT);
      expect(w.size).toBe(0);

      const after = await timed(w.wait("lkp_AfterClose01", LONG));
      expect(after.value).toBe(false);
      expect(after.ms).toBeLessThan(PROMPT);
      expect(w.size).toBe(0);
    });
  });

  describe("answers carried with a notice", () => {
    const answer = lookupAnswerText(new Date("2026-11-23T10:00:00.000Z"), [{ row_no: 1, checks: [{ status: "ok" }] }]);

    it("hands the answer to waitForAnswer, while wait() still just wakes", async () => {
      const withAnswer = waiter.waitForAnswer("lkp_Answered0001", LONG);
      const plain = waiter.wait("lkp_Answered0001", LONG);
      await publishCompletion(publisher, env.redisPrefix, "lkp_Answered0001", answer);
      expect(await withAnswer).toEqual({ woken: true, answer });
      expect(await plain).toBe(true);
      expect(readLookupAnswer(answer)).toEqual({ completed_at: "2026-11-23T10:00:00.000Z", rows: [{ row_no: 1, checks: [{ status: "ok" }] }] });
    });

    it("drops an answer that would make the notice too large: the id alone still wakes the waiter", async () => {
      const big = lookupAnswerText(new Date(), [{ row_no: 1, checks: ["x".repeat(MAX_ANSWER_NOTICE_BYTES)] }]);
      const pending = waiter.waitForAnswer("lkp_TooLarge0001", LONG);
      await publishCompletion(publisher, env.redisPrefix, "lkp_TooLarge0001", big);
      expect(await pending).toEqual({ woken: true });
    });

    it("reads only answers of the right shape", () => {
      for (const text of ["", "{", "null", "[]", '{"rows":[]}', '{"completed_at":"x","rows":{}}', '{"completed_at":"x","rows":[{"row_no":"1","checks":[]}]}', '{"completed_at":"x","rows":[{"row_no":1}]}']) {
        expect(readLookupAnswer(text)).toBeNull();
      }
    });
  });
});
