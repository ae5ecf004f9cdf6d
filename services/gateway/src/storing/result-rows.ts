import { maskEmailInput, maskNumberInput, type ResultRow } from "@svc/domain";
import type { StoredRow } from "@svc/store";

/**
 * A result row as stored: its input only ever masked. One literal, one field order,
 * so the 50,000 rows of a job share one shape.
 */
export function storedRow(r: ResultRow): StoredRow {
  return {
    row_no: r.row_no,
    kind: r.kind,
    input_masked: r.kind === "number" ? maskNumberInput(r.input) : maskEmailInput(r.input),
    e164: r.e164,
    country: r.country,
    number_status: r.number_status,
    email: r.email,
    email_status: r.email_status,
    checks: r.checks,
  };
}

/** A result item in the API's field order, nothing else (rows may carry more). */
export function resultItem(r: Omit<ResultRow, "input">, input: string): ResultRow {
  return { row_no: r.row_no, kind: r.kind, input, e164: r.e164, country: r.country, number_status: r.number_status, email: r.email, email_status: r.email_status, checks: r.checks };
}

/** Stored rows read back as result items: `input` is the masked form. */
export function readRows(rows: readonly StoredRow[]): ResultRow[] {
  return rows.map((r) => resultItem(r, r.input_masked));
}
