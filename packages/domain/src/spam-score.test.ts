import { scoreSpam, type SignalClass, type SpamEvidence } from "./spam-score";

type Counts = Partial<Record<SignalClass, number>>;

/** Evidence with `n` reports per class, all in one month unless dates are given. */
function evidence(counts: Counts, extra: Partial<SpamEvidence> = {}): SpamEvidence {
  const classes: SpamEvidence["classes"] = {};
  for (const [c, n] of Object.entries(counts) as Array<[SignalClass, number]>) classes[c] = { reports: n, first: "2026-03-04", last: "2026-09-30" };
  return { classes, topCategory: "robocall", voipRange: false, ...extra };
}

const score = (counts: Counts, extra: Partial<SpamEvidence> = {}) => scoreSpam(evidence(counts, extra)).attributes as Record<string, unknown>;

describe("scoreSpam", () => {
  it("answers no_reports (registered false, score 0, no dates or category) when nothing is held", () => {
    const answer = scoreSpam(evidence({}));
    expect(answer).toEqual({
      status: "ok",
      registered: false,
      attributes: {
        risk_level: "no_reports",
        risk_score: 0,
        reason_regulator: false,
        reason_government: false,
        reason_community: false,
        reason_unassigned: false,
        voip_range: false,
        top_category: null,
        first_seen: null,
        last_seen: null,
        sources: 0,
      },
    });
  });

  it("ignores a class that is listed with zero reports", () => {
    expect(score({ government: 0 })).toMatchObject({ risk_level: "no_reports", sources: 0, reason_government: false });
    expect(score({ government: 0, community: 1 })).toMatchObject({ risk_level: "low", sources: 1, reason_government: false, reason_community: true });
  });

  it.each([
    // class, reports, points
    ["regulator", 1, 75],
    ["regulator", 5, 75],
    ["government", 1, 15],
    ["government", 2, 20],
    ["government", 4, 25],
    ["government", 8, 30],
    ["government", 15, 35],
    ["government", 32, 40],
    ["government", 1_000_000, 40],
    ["community", 1, 8],
    ["community", 2, 12],
    ["community", 8, 20],
    ["community", 32, 28],
    ["community", 1_000_000, 35],
    ["unassigned", 1, 20],
    ["unassigned", 3, 20],
  ] as Array<[SignalClass, number, number]>)("scores %s with %i report(s) as %i points", (cls, n, points) => {
    expect(score({ [cls]: n }).risk_score).toBe(points);
  });

  it("puts the low/medium boundary at 30", () => {
    expect(score({ government: 4 })).toMatchObject({ risk_score: 25, risk_level: "low" });
    expect(score({ government: 8 })).toMatchObject({ risk_score: 30, risk_level: "medium" });
    expect(score({ community: 1 })).toMatchObject({ risk_score: 8, risk_level: "low" });
    expect(score({ unassigned: 1 })).toMatchObject({ risk_score: 20, risk_level: "low" });
  });

  it("puts the medium/high boundary at 70 when high is allowed", () => {
    // three classes, no regulator: 29 + 20 + 20 = 69, then 30 + 20 + 20 = 70
    expect(score({ government: 7, community: 8, unassigned: 1 })).toMatchObject({ risk_score: 69, risk_level: "medium", sources: 3 });
    expect(score({ government: 8, community: 8, unassigned: 1 })).toMatchObject({ risk_score: 70, risk_level: "high", sources: 3 });
  });

  it("never rates a single non-regulator class high, however many reports it has", () => {
    for (const cls of ["government", "community", "unassigned"] as const) {
      for (const n of [1, 2, 10, 100, 10_000, 1_000_000]) {
        const a = score({ [cls]: n });
        expect(a.risk_level).not.toBe("high");
        expect(a.sources).toBe(1);
      }
    }
  });

  it("rates a regulator action high on its own (the spec's first way to high)", () => {
    expect(score({ regulator: 1 })).toMatchObject({ risk_score: 75, risk_level: "high", reason_regulator: true, sources: 1 });
    expect(score({ regulator: 1, community: 2 })).toMatchObject({ risk_score: 87, risk_level: "high", sources: 2 });
    expect(score({ regulator: 1, unassigned: 1 })).toMatchObject({ risk_score: 95, risk_level: "high", reason_unassigned: true });
  });

  it("allows high for two independent classes (the second way) once their score reaches 70", () => {
    expect(score({ government: 8, community: 8 })).toMatchObject({ risk_score: 50, risk_level: "medium", sources: 2 });
    expect(score({ government: 1_000, community: 1_000 })).toMatchObject({ risk_score: 75, risk_level: "high", sources: 2 });
    expect(score({ government: 16, unassigned: 1, community: 1 })).toMatchObject({ risk_score: 63, risk_level: "medium" });
    expect(score({ government: 16, community: 16, unassigned: 1 })).toMatchObject({ risk_score: 79, risk_level: "high", sources: 3 });
  });

  it("caps the score at 100", () => {
    expect(score({ regulator: 3, government: 50, community: 50, unassigned: 1 })).toMatchObject({ risk_score: 100, risk_level: "high", sources: 4 });
  });

  it("adds no points for a VoIP range: it is a hint only", () => {
    for (const counts of [{}, { community: 1 }, { government: 8 }, { government: 8, community: 8, unassigned: 1 }] as Counts[]) {
      const plain = score(counts, { voipRange: false });
      const voip = score(counts, { voipRange: true });
      expect(voip.voip_range).toBe(true);
      expect(plain.voip_range).toBe(false);
      expect({ ...voip, voip_range: false }).toEqual(plain);
    }
  });

  it("reports first_seen and last_seen as YYYY-MM across all classes", () => {
    const a = scoreSpam({
      classes: {
        government: { reports: 8, first: "2025-12-04", last: "2026-10-06" },
        community: { reports: 3, first: "2026-05-03", last: "2026-10-30" },
        unassigned: { reports: 1, first: "2026-11-02", last: "2026-11-02" },
      },
      topCategory: "warranty",
      voipRange: false,
    }).attributes;
    expect(a).toMatchObject({ first_seen: "2025-12", last_seen: "2026-11", top_category: "warranty", sources: 3 });
    expect(String(a?.first_seen)).toMatch(/^\d{4}-\d{2}$/);
  });

  it("sets one reason flag per class present", () => {
    expect(score({ government: 2, unassigned: 1 })).toMatchObject({
      reason_regulator: false,
      reason_government: true,
      reason_community: false,
      reason_unassigned: true,
      sources: 2,
      top_category: "robocall",
    });
  });
});
