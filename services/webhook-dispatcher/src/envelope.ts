import type { DeliveryTask } from "@svc/store";

/**
 * The body POSTed for an event: the spec's envelope `{type, id, created_at, data}`
 * plus `livemode`. Built from the stored event only, so every attempt of a delivery
 * sends the same bytes; `data` never holds a phone number or e-mail address.
 */
export function envelope(task: Pick<DeliveryTask, "event_type" | "event_id" | "event_created_at" | "livemode" | "event_data">): string {
  return JSON.stringify({
    type: task.event_type,
    id: task.event_id,
    created_at: task.event_created_at.toISOString(),
    livemode: task.livemode,
    data: task.event_data,
  });
}
