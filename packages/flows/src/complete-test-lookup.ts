import { answerTestRows, rowFromStored, summarise, type CheckCode, type IdentifierStatus } from "@svc/domain";
import { completeLookup, getLookupIdentifiers, lockLookupForCompletion, recordEvent, withTransaction, type Store } from "@svc/store";

export type Completion = { completed: boolean; eventId: string | null };

/**
 * Completes a pending test lookup whose time has come, from the stored identifiers
 * alone (test answers are deterministic). Safe to run any number of times, from
 * any replica: only the first run flips the status and records lookup.completed,
 * and only when a 202 was sent and a webhook endpoint was named.
 */
export async function completeTestLookup(store: Store, lookupId: string, now: Date): Promise<Completion> {
  return withTransaction(store.pool, async (client) => {
    const lookup = await lockLookupForCompletion(client, lookupId);
    if (!lookup || lookup.status !== "pending" || lookup.livemode || !lookup.completes_at || lookup.completes_at > now) {
      return { completed: false, eventId: null };
    }
    const stored = await getLookupIdentifiers(client, lookupId);
    const prepared = stored.map((r) =>
      rowFromStored({ ...r, status: ((r.kind === "number" ? r.number_status : r.email_status) ?? "invalid") as IdentifierStatus }),
    );
    const answered = answerTestRows(prepared, lookup.checks as CheckCode[], now, true);
    const done = await completeLookup(
      client,
      lookupId,
      answered.rows.map((r) => ({ row_no: r.row_no, checks: r.checks })),
      now,
    );
    if (!done) return { completed: false, eventId: null };
    let eventId: string | null = null;
    if (done.announced_pending && done.webhook_endpoint_id) {
      eventId = await recordEvent(client, {
        accountId: done.account_id,
        livemode: done.livemode,
        type: "lookup.completed",
        endpointId: done.webhook_endpoint_id,
        createdAt: now,
        data: lookupCompletedData(done.id, done.livemode, answered.rows),
      });
    }
    return { completed: true, eventId };
  });
}

/** `lookup.completed` data: ids and counts only, never a number or address. */
export function lookupCompletedData(id: string, livemode: boolean, rows: Parameters<typeof summarise>[0]): Record<string, unknown> {
  return { object: "lookup", id, status: "completed", livemode, summary: summarise(rows) };
}
