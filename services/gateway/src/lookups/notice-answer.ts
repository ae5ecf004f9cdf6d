import type { CheckResult } from "@svc/domain";
import { readLookupAnswer } from "@svc/queues";
import { lookupRecordOf, type NewLookup, type StoredRow } from "@svc/store";
import type { LoadedLookup } from "./await-lookup";

/**
 * The completed lookup a completion notice's answer describes, for the request that
 * created `stored` and waits for it: its own rows (identifiers never travel in a
 * notice) with the checks and completion time the worker's completing statement
 * stored — what reading the lookup back would give. Null when the answer does not
 * fit those rows or a read would not find the lookup (past its retention): the
 * caller then reads Postgres as it would without one.
 */
export function lookupFromNotice(stored: NewLookup, text: string, now: Date): LoadedLookup | null {
  const answer = readLookupAnswer(text);
  const completedAt = answer ? new Date(answer.completed_at) : null;
  if (!answer || !completedAt || Number.isNaN(completedAt.getTime()) || answer.rows.length !== stored.rows.length || stored.expiresAt <= now) return null;
  const rows: StoredRow[] = [];
  for (const [i, row] of stored.rows.entries()) {
    const answered = answer.rows[i];
    if (answered?.row_no !== row.row_no) return null;
    rows.push({ ...row, checks: answered.checks as CheckResult[] });
  }
  return { lookup: { ...lookupRecordOf(stored), status: "completed", completed_at: completedAt }, rows };
}
