import type pg from "pg";
import { scoreSpam, type Answer, type SpamEvidence } from "@svc/domain";
import { spamEvidence, type SpamEvidenceRow } from "@svc/store";
import { SourceError, type Identifier, type Source } from "./types";

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
    let rows: SpamEvidenceRow[];
    try {
      rows = await spamEvidence(this.pool, numbers, this.options.today?.() ?? null);
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
