import { summarise, type ResultRow } from "@svc/domain";
import type { LookupRecord, StoredRow } from "@svc/store";

/** A result item in the API's field order, nothing else (rows may carry more). */
function resultItem(r: Omit<ResultRow, "input">, input: string): ResultRow {
  return { row_no: r.row_no, kind: r.kind, input, e164: r.e164, country: r.country, number_status: r.number_status, email: r.email, email_status: r.email_status, checks: r.checks };
}

/** Stored rows read back as result items: `input` is the masked form. */
export function readRows(rows: readonly StoredRow[]): ResultRow[] {
  return rows.map((r) => resultItem(r, r.input_masked));
}

/** The API shape of a lookup. `rows` carry raw `input` only in the creating response. */
export function presentLookup(lookup: LookupRecord, rows: readonly ResultRow[], baseUrl: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: lookup.id,
    object: "lookup",
    status: lookup.status,
    livemode: lookup.livemode,
    checks: lookup.checks,
    created_at: lookup.created_at.toISOString(),
    completed_at: lookup.completed_at ? lookup.completed_at.toISOString() : null,
    webhook_endpoint_id: lookup.webhook_endpoint_id,
    summary: summarise(rows),
    results: rows.map((r) => resultItem(r, r.input)),
  };
  if (lookup.status === "pending") body.next = { poll_url: pollUrl(baseUrl, lookup.id) };
  return body;
}

export function pollUrl(baseUrl: string, id: string): string {
  return `${baseUrl}/v1/lookups/${id}`;
}
