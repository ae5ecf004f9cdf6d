import { DELIVERY_WINDOW_MS, nextRetryAt, RETRY_DELAYS_MS, VERIFICATION_WINDOW_MS } from "./retry-schedule";

const T0 = new Date("2026-11-21T00:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

describe("retry schedule", () => {
  test("retries after about 5 s, 5 min, 30 min, 2 h, 5 h and 10 h, then gives up", () => {
    let now = T0;
    const gaps: number[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const next = nextRetryAt({ eventCreatedAt: T0, attemptsMade: attempt, now, windowMs: DELIVERY_WINDOW_MS, random: () => 0.5 });
      if (!next) break;
      gaps.push(next.getTime() - now.getTime());
      now = next;
    }
    expect(gaps).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000]);
  });

  test("jitter stays within ±10 % of each delay", () => {
    for (const [i, delay] of RETRY_DELAYS_MS.entries()) {
      const low = nextRetryAt({ eventCreatedAt: T0, attemptsMade: i + 1, now: T0, windowMs: DELIVERY_WINDOW_MS, random: () => 0 });
      const high = nextRetryAt({ eventCreatedAt: T0, attemptsMade: i + 1, now: T0, windowMs: DELIVERY_WINDOW_MS, random: () => 0.999999 });
      expect(low?.getTime()).toBe(T0.getTime() + Math.round(delay * 0.9));
      expect((high?.getTime() ?? 0) - T0.getTime()).toBeGreaterThan(delay * 1.09);
      expect((high?.getTime() ?? 0) - T0.getTime()).toBeLessThanOrEqual(delay * 1.1);
    }
  });

  test("a retry that would fall more than 24 h after the event is not scheduled", () => {
    const now = at(DELIVERY_WINDOW_MS - 4_000);
    expect(nextRetryAt({ eventCreatedAt: T0, attemptsMade: 1, now, windowMs: DELIVERY_WINDOW_MS, random: () => 0.5 })).toBeNull();
    const earlier = at(DELIVERY_WINDOW_MS - 6_000);
    expect(nextRetryAt({ eventCreatedAt: T0, attemptsMade: 1, now: earlier, windowMs: DELIVERY_WINDOW_MS, random: () => 0.5 })).toEqual(at(DELIVERY_WINDOW_MS - 1_000));
  });

  test("verification challenges retry only within their hour", () => {
    const third = nextRetryAt({ eventCreatedAt: T0, attemptsMade: 3, now: at(305_000), windowMs: VERIFICATION_WINDOW_MS, random: () => 0.5 });
    expect(third).toEqual(at(2_105_000));
    expect(nextRetryAt({ eventCreatedAt: T0, attemptsMade: 4, now: at(2_105_000), windowMs: VERIFICATION_WINDOW_MS, random: () => 0.5 })).toBeNull();
  });
});
