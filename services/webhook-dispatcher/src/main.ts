import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService } from "@svc/core";
import { loadServiceConfig } from "./config";

/** The webhook-dispatcher: consumes the `webhooks` queue and delivers signed events. */
startService("webhook-dispatcher", async () => {
  loadDotEnv();
  const config = loadServiceConfig();
  await runWorkerService({ name: "webhook-dispatcher", queue: QUEUES.webhooks, config, handlers: () => ({}) });
});
