import type { LookupSchema, Static } from "@svc/contract";
import { summarise, type ResultRow } from "@svc/domain";
import type { LookupRecord } from "@svc/store";
import { resultItem } from "../storing/result-rows";

export type Lookup = Static<typeof LookupSchema>;

/** The API shape of a lookup. `rows` carry raw `input` only in the creating response. */
export function presentLookup(lookup: LookupRecord, rows: readonly ResultRow[], baseUrl: string): Lookup {
  const body: Lookup = {
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
