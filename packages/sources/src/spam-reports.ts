import type pg from "pg";
import { SPAM_HORIZON_DAYS, SPAM_RECENCY, scoreSpam, type Answer, type SignalClass, type SpamEvidence } from "@svc/domain";
import { SourceError, type Identifier, type Source } from "./types";

/**
 * The weight of a report row as SQL, built from the domain's table (SPAM_RECENCY) so the
 * query and `reportWeight` cannot disagree. Only constants of our own go into the text.
 */
function weightSql(age: string): string {
  const classes = (Object.entries(SPAM_RECENCY) as Array<[SignalClass, typeof SPAM_RECENCY.government]>).map(([cls, tiers]) => {
    const steps = tiers.map((t) => `WHEN ${age} <= ${Math.trunc(t.withinDays)} THEN ${Number(t.weight)}::float8`).join(" ");
    return `WHEN '${cls}' THEN CASE ${steps} ELSE 0::float8 END`;
  });
  return `CASE r.signal_class ${classes.join(" ")} ELSE 0::float8 END`;
}

/**
 * One statement per batch. `$2` is today (`YYYY-MM-DD`), or NULL for the database's own
 * UTC day. Rows older than the longest window are never read (the (e164, reported_on)
 * index bounds the scan); the rest are weighed once in `counted` and aggregated per
 * number and class, with the top category over the same reports.
 */
const EVIDENCE_SQL = `
WITH today AS (SELECT coalesce($2::date, (now() AT TIME ZONE 'UTC')::date) AS d),
counted AS MATERIALIZED (
  SELECT r.e164, r.signal_class, r.category, r.reported_on,
         ${weightSql("greatest(0, today.d - r.reported_on)")} AS weight
  FROM spam_reports r, today
  WHERE r.e164 = ANY($1::text[]) AND r.reported_on >= today.d - ${SPAM_HORIZON_DAYS}
),
top AS (
  SELECT DISTINCT ON (e164) e164, category
  FROM counted WHERE weight > 0 AND category IS NOT NULL
  GROUP BY e164, category
  ORDER BY e164, sum(weight) DESC, count(*) DESC, category COLLATE "C"
)
SELECT c.e164, c.signal_class, count(*)::int AS reports, sum(c.weight)::float8 AS weighted, max(c.weight)::float8 AS freshest,
       to_char(min(c.reported_on), 'YYYY-MM-DD') AS first, to_char(max(c.reported_on), 'YYYY-MM-DD') AS last,
       min(t.category) AS top_category
FROM counted c LEFT JOIN top t ON t.e164 = c.e164
WHERE c.weight > 0
GROUP BY c.e164, c.signal_class`;

export type ReportStoreOptions = {
  /** Today as `YYYY-MM-DD` (tests pin it); by default the database's current UTC day. */
  today?: () => string;
};

/**
 * `number.spam` computed by the service from the report store that the importers
 * fill (FTC, FCC, regulator actions, community reports, unassigned offers). Only
 * reports inside their class's recency window count, weighted by age (SPAM_RECENCY
 * in @svc/domain, docs/spam-importers.md). The answer carries counts and dates
 * only: no report text, no names.
 */
export class ReportStoreSpamSource implements Source {
  readonly route = "report-store";
  readonly check = "number.spam" as const;
  readonly maxBatch = 1_000;

  constructor(
    private readonly pool: Pick<pg.Pool, "query">,
    private readonly options: ReportStoreOptions = {},
  ) {}

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    return (await this.lookupMany([id], signal))[0] as Answer;
  }

  /** One query for a whole batch of numbers. */
  async lookupMany(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]> {
    const numbers = [...new Set(ids.map((id) => id.e164).filter((n): n is string => Boolean(n)))];
    type Row = { e164: string; signal_class: SignalClass; reports: number; weighted: number; freshest: number; first: string; last: string; top_category: string | null };
    let rows: Row[] = [];
    try {
      if (numbers.length > 0) {
        rows = (await this.pool.query<Row>({ name: "spam-evidence-v2", text: EVIDENCE_SQL, values: [numbers, this.options.today?.() ?? null] })).rows;
      }
    } catch {
      throw new SourceError("unavailable", true, "report store query failed");
    }
    if (signal.aborted) throw new SourceError("timeout", true);
    const evidence = new Map<string, SpamEvidence>();
    for (const r of rows) {
      const e = evidence.get(r.e164) ?? { classes: {}, topCategory: r.top_category, voipRange: false };
      e.classes[r.signal_class] = { reports: r.reports, weighted: r.weighted, freshest: r.freshest, first: r.first, last: r.last };
      evidence.set(r.e164, e);
    }
    return ids.map((id) => {
      if (!id.e164) return { status: "invalid", registered: null, attributes: null };
      const e = evidence.get(id.e164) ?? { classes: {}, topCategory: null, voipRange: false };
      return scoreSpam({ ...e, voipRange: id.numberType === "VOIP" });
    });
  }
}
