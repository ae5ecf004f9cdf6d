import { commonEnv, loadConfig, opsEnv, Type, workerEnv } from "@svc/config";
import { webhookEnv, webhookSettings } from "@svc/webhooks";

export const DispatcherEnv = Type.Object({
  ...commonEnv,
  ...workerEnv(50),
  ...opsEnv(9467),
  ...webhookEnv,
  /** An attempt gets this long to answer with a status line (the spec: 10 s). Lower only in tests. */
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 10_000, default: 10_000 }),
  /** How long a host name may take to resolve before the attempt fails. */
  WEBHOOK_DNS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 10_000, default: 5_000 }),
  /** How often Postgres is swept for events and retries whose queue message was lost. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 2_000 }),
  /** Work overdue by more than this is taken by the sweep (the queue normally has it first). */
  SWEEP_GRACE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
});

export function loadDispatcherConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(DispatcherEnv, env);
  return { ...config, webhooks: webhookSettings(config) };
}
export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>;
