import type { Answer } from "./results";

export type SignalClass = "regulator" | "government" | "community" | "unassigned";

/** A report's weight while its age (days since the report's day) is at most `withinDays`. */
export type RecencyTier = { readonly withinDays: number; readonly weight: number };

/**
 * How long a report counts and how its weight fades, per signal class (docs/spam-importers.md,
 * "Recency and weight"). Tiers are tried in order; a report older than the last tier does
 * not count at all: it sets no reason, adds no points and gives no date. Why these windows:
 * callers rotate their numbers within weeks and a disconnected US residential number may be
 * handed to a new subscriber after 45 to 90 days (47 CFR 52.15(f)(1)(ii)), so a report describes the
 * number's holder reliably for a few months and less and less after that; three years is
 * the end for every class. A regulator action is vetted and rare, so it keeps full weight
 * for a year. An unassigned offer says only that nobody held the number on that day: once
 * the number can have been assigned again (90 days) it says nothing about today's holder.
 */
export const SPAM_RECENCY: Readonly<Record<SignalClass, readonly RecencyTier[]>> = {
  regulator: [
    { withinDays: 365, weight: 1 },
    { withinDays: 1_095, weight: 0.5 },
  ],
  government: [
    { withinDays: 90, weight: 1 },
    { withinDays: 365, weight: 0.5 },
    { withinDays: 1_095, weight: 0.25 },
  ],
  community: [
    { withinDays: 90, weight: 1 },
    { withinDays: 365, weight: 0.5 },
    { withinDays: 1_095, weight: 0.25 },
  ],
  unassigned: [{ withinDays: 90, weight: 1 }],
};

/** Oldest age, in days, at which any class still counts a report (the store query reads no older rows). */
export const SPAM_HORIZON_DAYS = Math.max(...Object.values(SPAM_RECENCY).flatMap((tiers) => tiers.map((t) => t.withinDays)));

/** The weight of one report `ageDays` old (a report dated after today counts as today's). */
export function reportWeight(signalClass: SignalClass, ageDays: number): number {
  const age = Math.max(0, ageDays);
  return SPAM_RECENCY[signalClass].find((t) => age <= t.withinDays)?.weight ?? 0;
}

/** Days from `day` to `asOf`, both `YYYY-MM-DD` (calendar days, as the store's `asOf - reported_on`). */
export function ageInDays(asOf: string, day: string): number {
  return Math.round((Date.parse(`${asOf}T00:00:00Z`) - Date.parse(`${day}T00:00:00Z`)) / 86_400_000);
}

/** What counts of one class's reports: only reports inside the class's window. */
export type ClassEvidence = {
  /** Reports that count. */
  reports: number;
  /** The sum of their weights: the report count the score grows with. */
  weighted: number;
  /** The largest of their weights (the newest report's): what a fixed-points class scores with. */
  freshest: number;
  /** `YYYY-MM-DD` of the oldest and newest report that counts. */
  first: string;
  last: string;
};

/** What the report store holds about one number that counts today, per independent signal class. */
export type SpamEvidence = {
  classes: Partial<Record<SignalClass, ClassEvidence>>;
  /** Most frequent category over the reports that count (weighted by recency). */
  topCategory: string | null;
  voipRange: boolean;
};

/** One stored report, as the evidence is built from it. */
export type DatedReport = { signalClass: SignalClass; day: string; category: string | null };

/**
 * The evidence for one number from its reports as of `asOf` (`YYYY-MM-DD`). The report
 * store computes the same in SQL for a whole batch (packages/sources/src/spam-reports.ts);
 * this is the reference it is tested against, and what test mode derives its answers from.
 */
export function weighReports(reports: readonly DatedReport[], asOf: string, voipRange = false): SpamEvidence {
  const classes: SpamEvidence["classes"] = {};
  const categories = new Map<string, { weight: number; count: number }>();
  for (const r of reports) {
    const weight = reportWeight(r.signalClass, ageInDays(asOf, r.day));
    if (weight === 0) continue;
    const c = classes[r.signalClass];
    classes[r.signalClass] = c
      ? { reports: c.reports + 1, weighted: c.weighted + weight, freshest: Math.max(c.freshest, weight), first: r.day < c.first ? r.day : c.first, last: r.day > c.last ? r.day : c.last }
      : { reports: 1, weighted: weight, freshest: weight, first: r.day, last: r.day };
    if (r.category !== null) {
      const seen = categories.get(r.category) ?? { weight: 0, count: 0 };
      categories.set(r.category, { weight: seen.weight + weight, count: seen.count + 1 });
    }
  }
  const top = [...categories].sort(([a, x], [b, y]) => y.weight - x.weight || y.count - x.count || (a < b ? -1 : 1))[0];
  return { classes, topCategory: top ? top[0] : null, voipRange };
}

/** `count` reports of one class on one day with one category: what test mode derives, before it is expanded into reports. */
export type DatedReportGroup = { signalClass: SignalClass; day: string; category: string | null; count: number };

/**
 * `weighReports` of the groups expanded into single reports, in the same order, without
 * expanding them: one weight per group instead of one per report (test mode derives up to
 * ~95 reports for a number; a 50,000-row test job weighs them all). Same result to the
 * bit: weights are 1, 0.5 or 0.25, so `weight * count` is exactly the repeated sum.
 */
export function weighReportGroups(groups: readonly DatedReportGroup[], asOf: string, voipRange = false): SpamEvidence {
  const classes: SpamEvidence["classes"] = {};
  const categories = new Map<string, { weight: number; count: number }>();
  for (const g of groups) {
    if (g.count <= 0) continue;
    const weight = reportWeight(g.signalClass, ageInDays(asOf, g.day));
    if (weight === 0) continue;
    const c = classes[g.signalClass];
    classes[g.signalClass] = c
      ? { reports: c.reports + g.count, weighted: c.weighted + weight * g.count, freshest: Math.max(c.freshest, weight), first: g.day < c.first ? g.day : c.first, last: g.day > c.last ? g.day : c.last }
      : { reports: g.count, weighted: weight * g.count, freshest: weight, first: g.day, last: g.day };
    if (g.category !== null) {
      const seen = categories.get(g.category) ?? { weight: 0, count: 0 };
      categories.set(g.category, { weight: seen.weight + weight * g.count, count: seen.count + g.count });
    }
  }
  const top = [...categories].sort(([a, x], [b, y]) => y.weight - x.weight || y.count - x.count || (a < b ? -1 : 1))[0];
  return { classes, topCategory: top ? top[0] : null, voipRange };
}

/** Points that grow by `perDoubling` each time the (weighted) count doubles; under one report, in proportion. */
const growing = (base: number, perDoubling: number, cap: number) => (c: ClassEvidence) =>
  c.weighted >= 1 ? Math.min(cap, base + Math.round(perDoubling * Math.log2(c.weighted))) : Math.round(base * c.weighted);
/** Points that do not grow with the count; a faded report gives its share. */
const fixed = (points: number) => (c: ClassEvidence) => Math.round(points * c.freshest);

/**
 * Points per signal class. A regulator action alone reaches `high` (75); government
 * complaints (up to 40) or community reports (up to 35) alone never do, but many of
 * both together can (75); an "offered as unassigned" listing adds 20.
 */
const POINTS = {
  regulator: fixed(75),
  government: growing(15, 5, 40),
  community: growing(8, 4, 35),
  unassigned: fixed(20),
} satisfies Record<SignalClass, (c: ClassEvidence) => number>;

const month = (day: string) => day.slice(0, 7);

/**
 * The spam score, from the reports that count only (see SPAM_RECENCY): a regulator action
 * weighs most, government complaints and community reports grow with their weighted
 * count, a recent "offered as unassigned" listing adds a fixed amount; a VoIP range is a
 * hint and adds nothing. `high` needs a score of 70 and either a regulator action or two
 * independent signal classes; `no_reports` (conclusive, billed) means nothing that counts
 * is held. Reasons, `sources`, `first_seen` and `last_seen` all describe the same reports:
 * those that count.
 */
export function scoreSpam(e: SpamEvidence): Answer {
  const present = (Object.keys(e.classes) as SignalClass[]).filter((c) => {
    const k = e.classes[c];
    return k !== undefined && k.reports > 0 && k.weighted > 0;
  });
  let score = 0;
  for (const c of present) score += POINTS[c](e.classes[c] as ClassEvidence);
  score = Math.min(100, score);
  const sources = present.length;
  let level: "high" | "medium" | "low" | "no_reports" = "no_reports";
  if (sources > 0) {
    const highAllowed = present.includes("regulator") || sources >= 2;
    level = score >= 70 && highAllowed ? "high" : score >= 30 ? "medium" : "low";
  }
  const firsts = present.map((c) => e.classes[c]?.first as string).sort();
  const lasts = present.map((c) => e.classes[c]?.last as string).sort();
  return {
    status: "ok",
    registered: sources > 0,
    attributes: {
      risk_level: level,
      risk_score: score,
      reason_regulator: present.includes("regulator"),
      reason_government: present.includes("government"),
      reason_community: present.includes("community"),
      reason_unassigned: present.includes("unassigned"),
      voip_range: e.voipRange,
      top_category: sources > 0 ? e.topCategory : null,
      first_seen: firsts.length ? month(firsts[0] as string) : null,
      last_seen: lasts.length ? month(lasts[lasts.length - 1] as string) : null,
      sources,
    },
  };
}
