import { isId } from "@svc/domain";
import { deliveryLog, getEventHeader, redeliverEvent, type EventHeader, type Sql } from "@svc/store";
import { CliError, parseFlags, required } from "../args";
import type { CliContext } from "../context";

async function findEvent(sql: Sql, args: string[]): Promise<EventHeader> {
  const id = required(parseFlags(args, ["event"]), "event");
  if (!isId("event", id)) throw new CliError(`not an event id: "${id}"`);
  const event = await getEventHeader(sql, id);
  if (!event) throw new CliError(`no event with id "${id}"`);
  return event;
}

const presentEvent = (e: EventHeader) => ({
  id: e.id,
  type: e.type,
  account_id: e.account_id,
  livemode: e.livemode,
  created_at: e.created_at.toISOString(),
  dispatched_at: e.dispatched_at?.toISOString() ?? null,
});

/** webhook attempts --event ID: every delivery of the event and every attempt (status, duration, error). */
export async function webhookAttempts(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const event = await findEvent(ctx.store.pool, args);
  const deliveries = await deliveryLog(ctx.store.pool, event.id);
  return {
    object: "event_deliveries",
    event: presentEvent(event),
    deliveries: deliveries.map((d) => ({ ...d, next_attempt_at: d.next_attempt_at?.toISOString() ?? null })),
  };
}

/**
 * webhook redeliver --event ID: makes each delivery of the event due now, whatever
 * its state (not to deleted endpoints). The dispatcher's sweep sends it; the
 * receiver sees the same webhook-id.
 */
export async function webhookRedeliver(args: string[], ctx: CliContext): Promise<Record<string, unknown>> {
  const event = await findEvent(ctx.store.pool, args);
  if (!event.dispatched_at) throw new CliError("the event has not been dispatched yet; the dispatcher will deliver it");
  const ids = await redeliverEvent(ctx.store.pool, event.id, ctx.now());
  return {
    object: "redelivery",
    event: presentEvent(event),
    deliveries: ids.length,
    note: "Due now: the webhook-dispatcher sends them within its sweep interval and grace (about 12 s by default).",
  };
}
