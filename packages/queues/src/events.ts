import { jobIdOf } from "./job-ids";
import type { Producer } from "./producer";

/**
 * Tells the webhook-dispatcher about events whose transaction has committed. The
 * event row is the truth: a notice lost here (Redis down, process killed) is found
 * by the dispatcher's sweep a few seconds later, so this never throws.
 */
export async function announceEvents(producer: Producer, eventIds: ReadonlyArray<string | null | undefined>, onError: (err: unknown) => void = () => undefined): Promise<void> {
  const ids = eventIds.filter((id): id is string => typeof id === "string" && id.length > 0);
  if (ids.length === 0) return;
  try {
    await producer.enqueueMany("event.dispatch", ids.map((eventId) => ({ payload: { eventId }, jobId: jobIdOf("event.dispatch", { eventId }) })));
  } catch (err) {
    onError(err);
  }
}
