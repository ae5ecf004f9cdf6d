import type { SignalClass } from "@svc/domain";
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
