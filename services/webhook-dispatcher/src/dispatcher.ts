import type { Logger } from "@svc/process";
import { jobIdOf, type Producer } from "@svc/queues";
import { metrics, onScrape } from "@svc/metrics";
import {
  activateEndpoint,
  deliveryCounts,
  expireHeldDeliveries,
  leaseDeliveries,
  planEvent,
  recordAttempt,
  resendDueVerifications,
  undispatchedEvents,
  type DeliveryTask,
  type Store,
} from "@svc/store";
import { decryptSecret, deliveryWindowMs, nextRetryAt, signWebhook, type DeliveryError, type WebhookTransport } from "@svc/webhooks";
import { envelope } from "./envelope";

export type DispatcherDeps = {
  store: Store;
  producer: Producer;
  logger: Logger;
  transport: Pick<WebhookTransport, "deliver">;
  dataKey: Buffer;
  /** How long an attempt holds its delivery: the attempt's deadline plus room for the writes around it. */
  leaseMs: number;
  /** Injectable clock and jitter: tests walk the whole retry schedule without waiting. */
  now: () => Date;
  random?: () => number;
};

const USER_AGENT = "svc-validate-webhooks/1";

/**
 * Plans and attempts webhook deliveries. Every step is safe to repeat: an event
 * is planned once (the plan and the event's `dispatched_at` are one statement), an
 * attempt needs the delivery's lease, and an attempt's outcome is written in one
 * statement. A process killed mid-attempt leaves a lease that runs out; the next
 * attempt carries the same `webhook-id` (the event id).
 */
export class Dispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /** A new event: plan its deliveries and make the first attempts now. */
  async dispatchEvent(eventId: string): Promise<void> {
    const now = this.deps.now();
    const planned = await planEvent(this.deps.store.pool, eventId, now, this.deps.leaseMs);
    // Already planned (a repeated message, or a crash after planning): attempt what is due and unleased.
    const tasks = planned ?? (await leaseDeliveries(this.deps.store.pool, { eventId }, now, this.deps.leaseMs));
    await Promise.all(tasks.map((t) => this.attempt(t)));
  }

  /** A retry, or a held delivery just released: attempt it if it is still due and free. */
  async attemptDelivery(deliveryId: string): Promise<void> {
    const tasks = await leaseDeliveries(this.deps.store.pool, { deliveryId }, this.deps.now(), this.deps.leaseMs);
    await Promise.all(tasks.map((t) => this.attempt(t)));
  }

  /**
   * The safety net, from Postgres alone: events never planned, deliveries overdue
   * (their queue message lost, or their attempt's dispatcher died and its lease ran
   * out), held deliveries past 24 h, and the hourly challenge to endpoints still
   * unverified. Everything found is attempted at once, so one pass takes at most one
   * attempt's deadline (WEBHOOK_TIMEOUT_MS) however many slow endpoints it meets.
   */
  async sweep(graceMs: number, limit = 200): Promise<void> {
    const now = this.deps.now();
    const cutoff = new Date(now.getTime() - graceMs);
    const pool = this.deps.store.pool;
    const undispatched = await undispatchedEvents(pool, cutoff, limit);
    const overdue = await leaseDeliveries(pool, { dueBefore: cutoff, limit }, now, this.deps.leaseMs);
    const expired = await expireHeldDeliveries(pool, now);
    if (expired > 0) this.deps.logger.info({ expired }, "held deliveries expired (24 h)");
    const challenges = await resendDueVerifications(pool, now);
    // One event or delivery that cannot be attempted must not hold up the others.
    await Promise.all([
      ...undispatched.map((eventId) => this.dispatchEvent(eventId).catch((err) => this.deps.logger.error({ err, eventId }, "event not dispatched"))),
      ...overdue.map((t) => this.attempt(t).catch((err) => this.deps.logger.error({ err, deliveryId: t.delivery_id }, "overdue delivery not attempted"))),
      ...challenges.map((eventId) => this.dispatchEvent(eventId).catch((err) => this.deps.logger.error({ err, eventId }, "challenge not dispatched"))),
    ]);
  }

  private async attempt(task: DeliveryTask): Promise<void> {
    const { logger, store } = this.deps;
    const attemptNo = task.attempts + 1;
    const startedAt = this.deps.now();
    const body = envelope(task);
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    let secret: string;
    try {
      secret = decryptSecret(this.deps.dataKey, task.secret_encrypted);
    } catch {
      // An operator error, not the receiver's: no attempt is counted and the lease runs out.
      throw new Error("cannot decrypt the endpoint's signing secret: DATA_ENCRYPTION_KEY differs from the gateway's");
    }
    const outcome = await this.deps.transport.deliver({
      url: task.url,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": task.event_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook(secret, task.event_id, timestamp, body),
      },
    });
    metrics.webhookAttempts().inc({ outcome: outcome.ok ? "success" : (outcome.error ?? "http_error") });
    metrics.webhookDuration().observe(outcome.durationMs / 1000);
    const now = this.deps.now();
    const retryAt = outcome.ok
      ? null
      : nextRetryAt({ eventCreatedAt: task.event_created_at, attemptsMade: attemptNo, now, windowMs: deliveryWindowMs(task.event_type), random: this.deps.random });
    const status = await recordAttempt(store.pool, {
      deliveryId: task.delivery_id,
      attemptNo,
      startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.statusCode,
      error: outcome.error,
      succeeded: outcome.ok,
      retryAt,
      now,
    });
    const log = { deliveryId: task.delivery_id, eventId: task.event_id, endpointId: task.endpoint_id, type: task.event_type, attemptNo, statusCode: outcome.statusCode, ms: outcome.durationMs };
    if (outcome.ok) logger.debug(log, "webhook delivered");
    else logger.info({ ...log, error: outcome.error, retryAt, status }, "webhook attempt failed");

    if (status === "pending" && retryAt) {
      await this.schedule(task.delivery_id, jobIdOf("delivery.attempt", { deliveryId: task.delivery_id, attemptNo: attemptNo + 1 }), retryAt.getTime() - now.getTime());
    }
    if (status === "succeeded" && task.event_type === "webhook.verification") {
      const released = await activateEndpoint(store.pool, task.endpoint_id, task.event_created_at, now);
      if (released) {
        logger.info({ endpointId: task.endpoint_id, released: released.length }, "webhook endpoint verified");
        for (const id of released) await this.schedule(id, jobIdOf("delivery.attempt", { deliveryId: id, releasedAt: now }), 0); // an endpoint can be verified again within the hour
      }
    }
  }

  /** Queues an attempt; if Redis is away, the sweep finds the delivery once it is overdue. */
  private async schedule(deliveryId: string, jobId: string, delayMs: number): Promise<void> {
    try {
      await this.deps.producer.enqueue("delivery.attempt", { deliveryId }, { jobId, delayMs: Math.max(0, delayMs) });
    } catch (err) {
      this.deps.logger.warn({ err, deliveryId }, "attempt not queued (the sweep will find it)");
    }
  }
}

/**
 * The dispatcher's gauges: deliveries by state, read from Postgres when scraped
 * (reused for 10 s; gone while Postgres cannot be read). Attempt outcomes start
 * at 0 so the first of each shows as an increase.
 */
export function dispatcherMetrics(store: Store): void {
  const failures: DeliveryError[] = ["http_error", "timeout", "connection_refused", "connection_error", "tls_error", "dns_error", "redirect", "url_refused"];
  for (const outcome of ["success", ...failures]) {
    metrics.webhookAttempts().inc({ outcome }, 0);
  }
  metrics.webhookDuration();
  const gauge = metrics.webhookDeliveries();
  onScrape(
    "webhook deliveries",
    async () => {
      try {
        const counts = await deliveryCounts(store.pool);
        for (const [state, n] of Object.entries(counts)) gauge.set({ state }, n);
      } catch {
        gauge.reset();
      }
    },
    { cacheMs: 10_000 },
  );
}
