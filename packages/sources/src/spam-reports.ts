import type pg from "pg";
import { scoreSpam, type Answer, type SignalClass, type SpamEvidence } from "@svc/domain";
import { SourceError, type Identifier, type Source } from "./types";

/**
 * `number.spam` computed by the service from the report store that the importers
 * fill (FTC, FCC, regulator actions, community reports, unassigned offers). The
 * answer carries counts and dates only: no report text, no names.
 */
export class ReportStoreSpamSource implements Source {
  readonly route = "report-store";
  readonly check = "number.spam" as const;
  readonly maxBatch = 1_000;

  constructor(private readonly pool: Pick<pg.Pool, "query">) {}

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    return (await this.lookupMany([id], signal))[0] as Answer;
  }

  /** One query for a whole batch of numbers. */
  async lookupMany(ids: readonly Identifier[], signal: AbortSignal): Promise<Answer[]> {
    const numbers = [...new Set(ids.map((id) => id.e164).filter((n): n is string => Boolean(n)))];
    type Row = { e164: string; signal_class: SignalClass; reports: number; first: string; last: string; top_category: string | null };
    let rows: Row[] = [];
    try {
      if (numbers.length > 0) {
        rows = (
          await this.pool.query<Row>({
            name: "spam-evidence",
            text: `SELECT r.e164, r.signal_class, count(*)::int AS reports,
                          to_char(min(r.reported_on), 'YYYY-MM-DD') AS first, to_char(max(r.reported_on), 'YYYY-MM-DD') AS last,
                          (SELECT category FROM spam_reports c WHERE c.e164 = r.e164 AND c.category IS NOT NULL
                            GROUP BY category ORDER BY count(*) DESC, category LIMIT 1) AS top_category
                   FROM spam_reports r WHERE r.e164 = ANY($1::text[]) GROUP BY r.e164, r.signal_class`,
            values: [numbers],
          })
        ).rows;
      }
    } catch {
      throw new SourceError("unavailable", true, "report store query failed");
    }
    if (signal.aborted) throw new SourceError("timeout", true);
    const evidence = new Map<string, SpamEvidence>();
    for (const r of rows) {
      const e = evidence.get(r.e164) ?? { classes: {}, topCategory: r.top_category, voipRange: false };
      e.classes[r.signal_class] = { reports: r.reports, first: r.first, last: r.last };
      evidence.set(r.e164, e);
    }
    return ids.map((id) => {
      if (!id.e164) return { status: "invalid", registered: null, attributes: null };
      const e = evidence.get(id.e164) ?? { classes: {}, topCategory: null, voipRange: false };
      return scoreSpam({ ...e, voipRange: id.numberType === "VOIP" });
    });
  }
}
