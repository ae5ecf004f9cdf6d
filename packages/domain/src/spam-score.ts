import type { Answer } from "./test-mode";

export type SignalClass = "regulator" | "government" | "community" | "unassigned";

/** What the report store holds about one number, per independent signal class. */
export type SpamEvidence = {
  classes: Partial<Record<SignalClass, { reports: number; first: string; last: string }>>;
  topCategory: string | null;
  voipRange: boolean;
};

/**
 * Points per signal class. A regulator action alone reaches `high` (75); government
 * complaints (up to 40) or community reports (up to 35) alone never do, but many of
 * both together can (75); an "offered as unassigned" listing adds 20.
 */
const POINTS = {
  regulator: () => 75,
  government: (n: number) => Math.min(40, 15 + Math.round(5 * Math.log2(n))),
  community: (n: number) => Math.min(35, 8 + Math.round(4 * Math.log2(n))),
  unassigned: () => 20,
} satisfies Record<SignalClass, (n: number) => number>;

const month = (day: string) => day.slice(0, 7);

/**
 * The spam score, from reports only: a regulator action weighs most, government
 * complaints and community reports grow with their count, a recent "offered as
 * unassigned" listing adds a fixed amount; a VoIP range is a hint and adds nothing.
 * `high` needs a score of 70 and either a regulator action or two independent
 * signal classes; `no_reports` (conclusive, billed) means nothing is held.
 */
export function scoreSpam(e: SpamEvidence): Answer {
  const present = (Object.keys(e.classes) as SignalClass[]).filter((c) => (e.classes[c]?.reports ?? 0) > 0);
  let score = 0;
  for (const c of present) score += POINTS[c](e.classes[c]?.reports ?? 0);
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
