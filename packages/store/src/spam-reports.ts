import { SPAM_HORIZON_DAYS, SPAM_RECENCY, type SignalClass } from "@svc/domain";
import type { Sql } from "./db";

/** One report row: the number, a category code, the day and its dedupe key. Nothing else is stored. */
export type SpamReportRow = { e164: string; category: string | null; reportedOn: string; dedupeKey: string };

/**
 * Inserts a batch of reports of one source in one statement; reports whose
 * dedupe key is already stored (or repeats within the batch) are left out.
 * Returns how many rows were added.
 */
export async function insertSpamReports(
  sql: Sql,
  batch: { importId: string; signalClass: SignalClass; source: string; reports: readonly SpamReportRow[] },
): Promise<number> {
  if (batch.reports.length === 0) return 0;
  const result = await sql.query(
    `INSERT INTO spam_reports (e164, signal_class, source, category, reported_on, dedupe_key, import_id)
     SELECT r.e164, $5, $6, r.category, r.reported_on, r.dedupe_key, $7
     FROM unnest($1::text[], $2::text[], $3::date[], $4::text[]) AS r(e164, category, reported_on, dedupe_key)
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [
      batch.reports.map((r) => r.e164),
      batch.reports.map((r) => r.category),
      batch.reports.map((r) => r.reportedOn),
      batch.reports.map((r) => r.dedupeKey),
      batch.signalClass,
      batch.source,
      batch.importId,
    ],
  );
  return result.rowCount ?? 0;
}

/** One row per completed import run: which file (by SHA-256), how many rows were read and added. */
export async function recordSpamImport(
  sql: Sql,
  run: { id: string; source: string; fileSha256: string; rowsRead: number; rowsAdded: number },
): Promise<{ createdAt: Date }> {
  const { rows } = await sql.query<{ created_at: Date }>(
    `INSERT INTO spam_imports (id, source, file_sha256, rows_read, rows_added) VALUES ($1, $2, $3, $4, $5) RETURNING created_at`,
    [run.id, run.source, run.fileSha256, run.rowsRead, run.rowsAdded],
  );
  return { createdAt: (rows[0] as { created_at: Date }).created_at };
}

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

/**
 * The reports of one number in one signal class that still count: how many, their summed
 * and their freshest weight, the first and last day (`YYYY-MM-DD`), and the number's top
 * category over all its counted reports.
 */
export type SpamEvidenceRow = {
  e164: string;
  signal_class: SignalClass;
  reports: number;
  weighted: number;
  freshest: number;
  first: string;
  last: string;
  top_category: string | null;
};

/**
 * The weighted report evidence of a batch of numbers, one row per number and class with
 * any weight left (numbers without any have no row). `today` is `YYYY-MM-DD`, or null for
 * the database's current UTC day. A prepared statement of its own name.
 */
export async function spamEvidence(sql: Sql, numbers: readonly string[], today: string | null): Promise<SpamEvidenceRow[]> {
  if (numbers.length === 0) return [];
  const { rows } = await sql.query<SpamEvidenceRow>({ name: "spam-evidence-v2", text: EVIDENCE_SQL, values: [numbers, today] });
  return rows;
}
