import { commonEnv, loadConfig, opsEnv, Type, workerEnv } from "@svc/config";

export const Env = Type.Object({
  ...commonEnv,
  ...workerEnv(20),
  ...opsEnv(9466),
  /** How often open reservations are checked for finished or abandoned work, and finished chunks for a lost settlement. */
  SWEEP_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  /** A job chunk finished this long ago with nothing settled is settled by the sweep (its message was lost). */
  SWEEP_GRACE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  /**
   * How often the ledger reconciliation runs for the imbalance gauge (it reads every
   * ledger entry, so not per scrape); 0 turns it off.
   */
  LEDGER_RECONCILE_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 300_000 }),
});

export const loadServiceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(Env, env);
