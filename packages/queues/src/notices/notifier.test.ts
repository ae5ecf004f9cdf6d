import { metrics } from "@svc/metrics";
import { createTestEnv, testFleet, type TestEnv } from "../../../../tests/support/env";
import { redisModes } from "../../../../tests/support/redis-modes";
import { createRedis, waitForRedis, type RedisClient } from "../connection";
import type { Fleet } from "../fleet";
import { FleetKeys } from "../fleet-keys";
import { NOTICE_MAX_AGE_MS, noticeChannels, routeTags, sealNotice } from "./seal";
import { CompletionWaiter, lookupAnswerText, MAX_ANSWER_NOTICE_BYTES, publishCompletion, readLookupAnswer } from "./notifier";

/**
 * CompletionWaiter over real Redis sharded pub/sub, on one server and on a cluster;
 * notices are published from a separate connection.
 */

let env: TestEnv;
let fleet: Fleet;
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
  fleet = testFleet(env);
});

/** Another fleet on the same Redis with the same prefix (REDIS_PREFIX's default, say) but its own key. */
const otherFleet = (): Fleet => ({ prefix: env.redisPrefix, keys: new FleetKeys("another fleet's message key, 32+ chars") });

/** Publisher, subscriber and waiters on the Redis of one describe.each mode, closed after it. */
function connectTo(urlOf: () => string): void {
  beforeAll(async () => {
    currentUrl = urlOf;
    publisher = createRedis(urlOf(), "producer", "notifier-test-pub");
    subscriber = createRedis(urlOf(), "subscriber", "notifier-test-sub");
    await Promise.all([waitForRedis(publisher), waitForRedis(subscriber)]);
    waiter = new CompletionWaiter(subscriber, fleet, () => metrics.noticesRefused().inc());
    await waiter.start();
    // More waiters on the same connection subscribe it to another prefix's channel and to
    // another fleet's (same prefix, other key), so `waiter` really receives (and must
    // ignore) their notices.
    for (const neighbourFleet of [testFleet(env, `${env.redisPrefix}:elsewhere`), otherFleet()]) {
      const neighbour = new CompletionWaiter(subscriber, neighbourFleet);
      extraWaiters.push(neighbour);
      await neighbour.start();
    }
  });

  afterAll(async () => {
    waiter?.close();
    for (const w of extraWaiters.splice(0)) w.close();
    await Promise.all([publisher, subscriber, ...extra.splice(0)].filter(Boolean).map((r) => r.quit().catch(() => undefined)));
  });
}

async function waitUntil(condition: () => boolean, ms = PROMPT): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
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
  const w = new CompletionWaiter(sub, fleet);
  extraWaiters.push(w);
  await w.start();
  return w;
}

describe("notice channels", () => {
  it("are namespaced by the prefix and by the fleet's key", () => {
    const keys = new FleetKeys("k".repeat(32));
    const [channel] = noticeChannels(keys, "t:abc");
    expect(channel).toMatch(/^t:abc:completed:[0-9a-f]{16}$/);
    expect(noticeChannels(new FleetKeys("j".repeat(32)), "t:abc")[0]).not.toBe(channel);
    // While a key is rotated, the waiter listens on both fleets' channels; publishers use the first.
    expect(noticeChannels(new FleetKeys("k".repeat(32), "j".repeat(32)), "t:abc")).toEqual([channel, noticeChannels(new FleetKeys("j".repeat(32)), "t:abc")[0]]);
  });
});

describe.each(redisModes())("on %s", (_mode, urlOf) => {
  connectTo(urlOf);

  describe("CompletionWaiter", () => {
    it("resolves true promptly when publishCompletion is called for its id from another connection", async () => {
      const pending = timed(waiter.wait("lkp_Notified0001", LONG));
      expect(waiter.size).toBe(1);
      await publishCompletion(publisher, fleet, "lkp_Notified0001");
      const { value, ms } = await pending;
      expect(value).toBe(true);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("wakes every waiter of the id with one notice", async () => {
      const a = waiter.wait("lkp_Shared000001", LONG);
      const b = waiter.wait("lkp_Shared000001", LONG);
      await publishCompletion(publisher, fleet, "lkp_Shared000001");
      const { value, ms } = await timed(Promise.all([a, b]));
      expect(value).toEqual([true, true]);
      expect(ms).toBeLessThan(PROMPT);
      expect(waiter.size).toBe(0);
    });

    it("resolves false at the timeout when nothing is announced for its id", async () => {
      const pending = timed(waiter.wait("lkp_Quiet0000001", 400));
      // Notices for another id, and for the same id under another prefix, do not wake it.
      await publishCompletion(publisher, fleet, "lkp_Other0000001");
      await publishCompletion(publisher, testFleet(env, `${env.redisPrefix}:elsewhere`), "lkp_Quiet0000001");
      // Nor does another fleet's, on the same server under the same prefix.
      await publishCompletion(publisher, otherFleet(), "lkp_Quiet0000001");
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
      await publishCompletion(publisher, fleet, "lkp_Answered0001", answer);
      expect(await withAnswer).toEqual({ woken: true, answer });
      expect(await plain).toBe(true);
      expect(readLookupAnswer(answer)).toEqual({ completed_at: "2026-11-23T10:00:00.000Z", rows: [{ row_no: 1, checks: [{ status: "ok" }] }] });
    });

    it("drops an answer that would make the notice too large: the id alone still wakes the waiter", async () => {
      const big = lookupAnswerText(new Date(), [{ row_no: 1, checks: ["x".repeat(MAX_ANSWER_NOTICE_BYTES)] }]);
      const pending = waiter.waitForAnswer("lkp_TooLarge0001", LONG);
      await publishCompletion(publisher, fleet, "lkp_TooLarge0001", big);
      expect(await pending).toEqual({ woken: true });
    });

    it("seals it: a subscriber of the channel sees neither the id nor the answer", async () => {
      const spy = createRedis(currentUrl(), "subscriber", "notifier-test-spy");
      extra.push(spy);
      await waitForRedis(spy);
      const seen: string[] = [];
      spy.on("smessage", (_channel: string, message: string) => seen.push(message));
      const [channel] = noticeChannels(fleet.keys, env.redisPrefix);
      await spy.ssubscribe(channel as string);
      const secret = lookupAnswerText(new Date(), [{ row_no: 1, checks: [{ check: "number.spam", status: "ok", attributes: { risk_level: "high_risk" } }] }]);
      const pending = waiter.waitForAnswer("lkp_Sealed000001", LONG);
      await publishCompletion(publisher, fleet, "lkp_Sealed000001", secret);
      expect(await pending).toEqual({ woken: true, answer: secret });
      await waitUntil(() => seen.length === 1);
      expect(seen[0]).not.toContain("lkp_Sealed000001");
      expect(seen[0]).not.toContain("risk_level");
      expect(seen[0]).not.toContain("high_risk");
    });

    it.each([
      ["an answer sealed with another key, under the waiter's own routing tag", (id: string, text: string) => {
        const forged = sealNotice(otherFleet().keys, env.redisPrefix, id, text);
        const [channel] = noticeChannels(fleet.keys, env.redisPrefix);
        return { channel: channel as string, message: `${routeTags(fleet.keys, id)[0]} ${forged.message.split(" ")[1]}` };
      }],
      ["a plain text answer (no seal) under the routing tag", (id: string, text: string) => ({ channel: noticeChannels(fleet.keys, env.redisPrefix)[0] as string, message: `${routeTags(fleet.keys, id)[0]} ${Buffer.from(text).toString("base64url")}` })],
      ["the id in clear, as notices were before they were sealed", (id: string, text: string) => ({ channel: noticeChannels(fleet.keys, env.redisPrefix)[0] as string, message: `${id} ${text}` })],
      ["a genuine notice of another lookup, moved under this one's tag", (id: string, text: string) => {
        const genuine = sealNotice(fleet.keys, env.redisPrefix, "lkp_SomeoneElse01", text);
        return { channel: genuine.channel, message: `${routeTags(fleet.keys, id)[0]} ${genuine.message.split(" ")[1]}` };
      }],
      ["a genuine notice sealed longer ago than NOTICE_MAX_AGE_MS (a replay)", (id: string, text: string) => sealNotice(fleet.keys, env.redisPrefix, id, text, Date.now() - NOTICE_MAX_AGE_MS - 1_000)],
    ])("ignores %s: the waiter is neither woken nor answered, and the refusal is counted", async (_, forge) => {
      const id = `lkp_Forge${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
      const forgedAnswer = lookupAnswerText(new Date(), [{ row_no: 1, checks: [{ check: "number.spam", status: "ok", attributes: { risk_level: "no_reports" } }] }]);
      const refusedBefore = (await metrics.noticesRefused().get()).values[0]?.value ?? 0;
      const pending = timed(waiter.waitForAnswer(id, 600));
      const { channel, message } = forge(id, forgedAnswer);
      await publisher.spublish(channel, message);
      const { value, ms } = await pending;
      expect(value).toEqual({ woken: false });
      expect(ms).toBeGreaterThanOrEqual(590);
      if (message.startsWith(routeTags(fleet.keys, id)[0] as string)) expect((await metrics.noticesRefused().get()).values[0]?.value).toBe(refusedBefore + 1);
    });

    it("opens a notice sealed with the key being rotated (FLEET_MESSAGE_KEY_ACCEPT)", async () => {
      const sub = createRedis(currentUrl(), "subscriber", "notifier-test-rotation");
      extra.push(sub);
      await waitForRedis(sub);
      const oldKey = "the fleet's key before the rotation, 32+";
      const rotating = new CompletionWaiter(sub, { prefix: env.redisPrefix, keys: new FleetKeys(env.messageKey, oldKey) });
      extraWaiters.push(rotating);
      await rotating.start();
      const fromOld = rotating.waitForAnswer("lkp_OldKey000001", LONG);
      const fromNew = rotating.waitForAnswer("lkp_NewKey000001", LONG);
      await publishCompletion(publisher, { prefix: env.redisPrefix, keys: new FleetKeys(oldKey) }, "lkp_OldKey000001", answer);
      await publishCompletion(publisher, fleet, "lkp_NewKey000001", answer);
      expect(await fromOld).toEqual({ woken: true, answer });
      expect(await fromNew).toEqual({ woken: true, answer });
    });

    it("reads only answers of the right shape", () => {
      for (const text of ["", "{", "null", "[]", '{"rows":[]}', '{"completed_at":"x","rows":{}}', '{"completed_at":"x","rows":[{"row_no":"1","checks":[]}]}', '{"completed_at":"x","rows":[{"row_no":1}]}']) {
        expect(readLookupAnswer(text)).toBeNull();
      }
    });
  });
});
