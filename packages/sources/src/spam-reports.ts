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

  constructor(private readonly pool: Pick<pg.Pool, "query">) {}

  async lookup(id: Identifier, signal: AbortSignal): Promise<Answer> {
    if (!id.e164) return { status: "invalid", registered: null, attributes: null };
    try {
      const { rows } = await this.pool.query<{ signal_class: SignalClass; reports: number; first: string; last: string; top_category: string | null }>({
        name: "spam-evidence",
        text: `SELECT signal_class, count(*)::int AS reports,
                      to_char(min(reported_on), 'YYYY-MM-DD') AS first, to_char(max(reported_on), 'YYYY-MM-DD') AS last,
                      (SELECT category FROM spam_reports c WHERE c.e164 = $1 AND c.category IS NOT NULL
                        GROUP BY category ORDER BY count(*) DESC, category LIMIT 1) AS top_category
               FROM spam_reports WHERE e164 = $1 GROUP BY signal_class`,
        values: [id.e164],
      });
      if (signal.aborted) throw new SourceError("timeout", true);
      const evidence: SpamEvidence = { classes: {}, topCategory: rows[0]?.top_category ?? null, voipRange: id.numberType === "VOIP" };
      for (const r of rows) evidence.classes[r.signal_class] = { reports: r.reports, first: r.first, last: r.last };
      return scoreSpam(evidence);
    } catch (err) {
      if (err instanceof SourceError) throw err;
      throw new SourceError("unavailable", true, "report store query failed");
    }
  }
}
