import { performance } from "node:perf_hooks";
import { HeldLease, type LeaseSettings, type WorkerContext } from "@svc/service-runner";
import type { CheckRunner } from "@svc/sources";
import type { LeaseRenewal } from "@svc/store";

/** What running a job chunk or a live lookup needs besides the worker context. */
export type WorkDeps = {
  runner: CheckRunner;
  cacheSecret: string;
  lease: LeaseSettings;
  /** Called after each lease renewal (tests wait on it instead of sleeping). */
  onRenewed?: () => void;
};

/**
 * Claims a row with `claim` and, when it was ours to take, holds it for the
 * attempt: renewed every `renewEveryMs` with `renew` (the claim's number is the
 * token), given up (and logged) when a renewal finds it taken or none succeeds in
 * time. Null when the claim was refused.
 */
export async function claimLeased<C extends { attempts: number; leased_until: Date }>(
  ctx: WorkerContext,
  deps: WorkDeps,
  what: Record<string, unknown>,
  claim: () => Promise<C | null>,
  renew: (r: LeaseRenewal) => Promise<boolean>,
): Promise<{ claimed: C; lease: HeldLease } | null> {
  const claimedAt = performance.now();
  const claimed = await claim();
  if (claimed === null) return null;
  const lease = new HeldLease({
    settings: deps.lease,
    now: ctx.now,
    claimedAt,
    leasedUntil: claimed.leased_until,
    renew: (r) => renew({ token: claimed.attempts, ...r }),
    onLost: (reason) => ctx.logger.warn({ ...what, reason }, "attempt stopped: its lease is lost; nothing of it is written"),
    onRenewError: (err) => ctx.logger.warn({ ...what, err }, "lease not renewed (the attempt stops if none succeeds in time)"),
    ...(deps.onRenewed ? { onRenewed: deps.onRenewed } : {}),
  });
  return { claimed, lease };
}
