import { announceEvents, type Producer } from "@svc/queues";
import type { Logger } from "@svc/process";

/**
 * After a transaction that recorded events commits: queue them for the
 * webhook-dispatcher. Never throws; a lost notice is found by the dispatcher's sweep.
 */
export function notifyDispatcher(ctx: { producer: Producer; logger: Logger }, eventIds: ReadonlyArray<string | null | undefined>): Promise<void> {
  return announceEvents(ctx.producer, eventIds, (err) => ctx.logger.warn({ err }, "event notice not queued (the dispatcher's sweep will find it)"));
}
