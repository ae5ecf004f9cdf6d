// First: tracing hooks modules as they load (./tracing).
import "./tracing";
import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService, type WorkerContext } from "@svc/service-runner";
import { systemResolver, WebhookTransport } from "@svc/webhooks";
import { loadDispatcherConfig } from "./config";
import { Dispatcher, dispatcherMetrics } from "./dispatcher";

/** The webhook-dispatcher: consumes the `webhooks` queue and delivers signed events. */
startService("webhook-dispatcher", async () => {
  loadDotEnv();
  const config = loadDispatcherConfig();
  const transport = new WebhookTransport({
    resolve: systemResolver(config.WEBHOOK_DNS_TIMEOUT_MS),
    policy: config.webhooks.policy,
    extraCa: config.webhooks.extraCa,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  let dispatcher: Dispatcher | undefined;
  const dispatcherFor = (ctx: WorkerContext) =>
    (dispatcher ??= new Dispatcher({ store: ctx.store, producer: ctx.producer, logger: ctx.logger, transport, dataKey: config.webhooks.dataKey, leaseMs: config.WEBHOOK_TIMEOUT_MS + 5_000, now: ctx.now }));
  await runWorkerService({
    name: "webhook-dispatcher",
    queue: QUEUES.webhooks,
    config,
    handlers: (ctx) => ({
      "event.dispatch": ({ eventId }) => dispatcherFor(ctx).dispatchEvent(eventId),
      "delivery.attempt": ({ deliveryId }) => dispatcherFor(ctx).attemptDelivery(deliveryId),
    }),
    periodic: [{ name: "sweep deliveries", everyMs: config.SWEEP_INTERVAL_MS, run: (ctx) => dispatcherFor(ctx).sweep(config.SWEEP_GRACE_MS) }],
    close: async () => transport.close(),
    metrics: (ctx) => dispatcherMetrics(ctx.store),
  });
});
