import { loadDotEnv } from "@svc/config";
import { QUEUES } from "@svc/queues";
import { runWorkerService, startService } from "@svc/core";
import { loadServiceConfig } from "./config";

/** The billing-ledger: consumes the `settlements` queue and settles money. */
startService("billing-ledger", async () => {
  loadDotEnv();
  const config = loadServiceConfig();
  await runWorkerService({ name: "billing-ledger", queue: QUEUES.settlements, config, handlers: () => ({}) });
});
