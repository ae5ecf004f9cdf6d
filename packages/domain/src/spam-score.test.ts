import { SPAM_HORIZON_DAYS, SPAM_RECENCY, ageInDays, reportWeight, scoreSpam, weighReports, type DatedReport, type SignalClass, type SpamEvidence } from "./spam-score";

type Counts = Partial<Record<SignalClass, number>>;

/** Evidence with `n` fresh (full-weight) reports per class. */
function evidence(counts: Counts, extra: Partial<SpamEvidence> = {}): SpamEvidence {
  const classes: SpamEvidence["classes"] = {};
  for (const [c, n] of Object.entries(counts) as Array<[SignalClass, number]>) classes[c] = { reports: n, weighted: n, freshest: 1, first: "2026-03-04", last: "2026-09-30" };
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
        government: { reports: 8, weighted: 8, freshest: 1, first: "2025-12-04", last: "2026-10-06" },
        community: { reports: 3, weighted: 3, freshest: 1, first: "2026-05-03", last: "2026-10-30" },
        unassigned: { reports: 1, weighted: 1, freshest: 1, first: "2026-11-02", last: "2026-11-02" },
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

const AS_OF = "2026-11-23";
/** The day `days` before AS_OF. */
const ago = (days: number) => new Date(Date.parse(`${AS_OF}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
const reports = (signalClass: SignalClass, n: number, daysAgo: number, category: string | null = null): DatedReport[] =>
  Array.from({ length: n }, () => ({ signalClass, day: ago(daysAgo), category }));
const scoreOf = (rs: DatedReport[]) => scoreSpam(weighReports(rs, AS_OF)).attributes as Record<string, unknown>;

describe("recency: how long a report counts and how its weight fades", () => {
  it.each([
    // class, age in days, weight
    ["government", -1, 1], // dated tomorrow (the importers accept it): as today's
    ["government", 0, 1],
    ["government", 90, 1],
    ["government", 91, 0.5],
    ["government", 365, 0.5],
    ["government", 366, 0.25],
    ["government", 1_095, 0.25],
    ["government", 1_096, 0],
    ["community", 90, 1],
    ["community", 91, 0.5],
    ["community", 366, 0.25],
    ["community", 1_096, 0],
    ["regulator", 365, 1],
    ["regulator", 366, 0.5],
    ["regulator", 1_095, 0.5],
    ["regulator", 1_096, 0],
    ["unassigned", 0, 1],
    ["unassigned", 90, 1],
    ["unassigned", 91, 0],
    ["unassigned", 3_650, 0],
  ] as Array<[SignalClass, number, number]>)("weighs a %s report %i days old as %d", (cls, age, weight) => {
    expect(reportWeight(cls, age)).toBe(weight);
  });

  it("keeps the windows well formed: ages rising, weights falling, nothing counted after three years", () => {
    for (const tiers of Object.values(SPAM_RECENCY)) {
      for (let i = 1; i < tiers.length; i += 1) {
        expect((tiers[i] as { withinDays: number }).withinDays).toBeGreaterThan((tiers[i - 1] as { withinDays: number }).withinDays);
        expect((tiers[i] as { weight: number }).weight).toBeLessThan((tiers[i - 1] as { weight: number }).weight);
      }
      expect(tiers[0]?.weight).toBe(1);
    }
    expect(SPAM_HORIZON_DAYS).toBe(1_095);
  });

  it("counts calendar days, leap days included", () => {
    expect(ageInDays("2028-03-01", "2028-02-28")).toBe(2);
    expect(ageInDays("2026-11-23", "2026-11-23")).toBe(0);
    expect(ageInDays("2026-11-23", "2023-11-23")).toBe(1_096); // 2024 is a leap year: just past the horizon
  });

  it("sets reason_unassigned only for an offer within the last 90 days (an offer from 2016 says nothing today)", () => {
    const old = scoreSpam(weighReports([{ signalClass: "unassigned", day: "2016-04-12", category: null }], AS_OF));
    expect(old).toMatchObject({ registered: false, attributes: { risk_level: "no_reports", risk_score: 0, reason_unassigned: false, first_seen: null, last_seen: null, sources: 0 } });
    expect(scoreOf(reports("unassigned", 1, 91))).toMatchObject({ reason_unassigned: false, risk_level: "no_reports" });
    expect(scoreOf(reports("unassigned", 1, 90))).toMatchObject({ reason_unassigned: true, risk_score: 20, risk_level: "low", sources: 1 });
    // An old offer next to a recent report: the report counts, the offer does not.
    expect(scoreOf([...reports("unassigned", 1, 400), ...reports("community", 1, 5)])).toMatchObject({ reason_unassigned: false, reason_community: true, risk_score: 8, sources: 1 });
  });

  it("counts old government and community reports as fewer reports, and none after three years", () => {
    expect(scoreOf(reports("government", 8, 30)).risk_score).toBe(30); // 8 reports
    expect(scoreOf(reports("government", 8, 200)).risk_score).toBe(25); // as 4
    expect(scoreOf(reports("government", 8, 700)).risk_score).toBe(20); // as 2
    expect(scoreOf(reports("government", 8, 1_200))).toMatchObject({ risk_score: 0, risk_level: "no_reports", reason_government: false });
    expect(scoreOf(reports("community", 32, 30)).risk_score).toBe(28);
    expect(scoreOf(reports("community", 32, 700)).risk_score).toBe(20); // as 8
    // Under one report's worth, the points are a share of one report's.
    expect(scoreOf(reports("community", 1, 200))).toMatchObject({ risk_score: 4, risk_level: "low", reason_community: true, sources: 1 });
    expect(scoreOf(reports("government", 1, 700))).toMatchObject({ risk_score: 4, reason_government: true });
    expect(scoreOf([...reports("government", 1, 700), ...reports("government", 1, 200)]).risk_score).toBe(11); // 0.75 of 15
  });

  it("lets a regulator action rate high on its own for a year, medium for two more, then nothing", () => {
    expect(scoreOf(reports("regulator", 1, 365))).toMatchObject({ risk_score: 75, risk_level: "high", reason_regulator: true });
    expect(scoreOf(reports("regulator", 1, 366))).toMatchObject({ risk_score: 38, risk_level: "medium", reason_regulator: true });
    // Several old actions are not a fresh one: the newest decides.
    expect(scoreOf(reports("regulator", 5, 500))).toMatchObject({ risk_score: 38, risk_level: "medium" });
    expect(scoreOf([...reports("regulator", 1, 500), ...reports("regulator", 1, 10)]).risk_score).toBe(75);
    expect(scoreOf(reports("regulator", 1, 1_096))).toMatchObject({ risk_score: 0, risk_level: "no_reports", reason_regulator: false });
  });

  it("never scores a report higher as it ages", () => {
    for (const cls of Object.keys(SPAM_RECENCY) as SignalClass[]) {
      let previous = Infinity;
      for (let age = 0; age <= 1_200; age += 1) {
        const points = scoreOf(reports(cls, 3, age)).risk_score as number;
        expect(points).toBeLessThanOrEqual(previous);
        previous = points;
      }
      expect(previous).toBe(0);
    }
  });

  it("gives first_seen and last_seen of the reports that count, not of everything held", () => {
    const a = scoreOf([
      ...reports("government", 3, 3_000), // 2018: too old to count
      ...reports("government", 2, 300),
      ...reports("community", 1, 20),
      ...reports("unassigned", 1, 800), // an old offer
    ]);
    expect(a).toMatchObject({ first_seen: ago(300).slice(0, 7), last_seen: ago(20).slice(0, 7), reason_unassigned: false, sources: 2 });
  });

  it("picks top_category over the reports that count, weighted by their recency", () => {
    const rs = [...reports("government", 9, 2_000, "debt_relief"), ...reports("government", 3, 700, "warranty"), ...reports("community", 1, 10, "robocall")];
    // 9 debt_relief reports are past the horizon; 3 warranty reports weigh 0.75, one fresh robocall weighs 1.
    expect(scoreOf(rs).top_category).toBe("robocall");
    expect(scoreOf([...rs, ...reports("community", 2, 700, "warranty")]).top_category).toBe("warranty");
    // A tie in weight goes to the more frequent category, then the first in code order.
    expect(scoreOf([...reports("community", 2, 200, "fraud"), ...reports("community", 1, 10, "survey")]).top_category).toBe("fraud");
    expect(scoreOf([...reports("community", 1, 10, "survey"), ...reports("community", 1, 10, "fraud")]).top_category).toBe("fraud");
  });
});
