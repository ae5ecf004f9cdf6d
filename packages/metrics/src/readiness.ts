/**
 * One thing a service needs to take traffic or work: Postgres answering, Redis
 * answering, its consumer running. `check` resolves when fine; it throws (or
 * resolves false) when not. Each check runs with a short deadline, so /readyz
 * answers within about a second even when a dependency hangs instead of refusing.
 */
export type ReadinessCheck = { name: string; check: () => Promise<boolean | void> | boolean | void };

export type Readiness = { ready: boolean; checks: Record<string, "ok" | "failing" | "timeout"> };

/** Longest one readiness check may take (Kubernetes' default probe timeout is 1 s). */
export const READINESS_CHECK_TIMEOUT_MS = 800;

async function runCheck(c: ReadinessCheck, timeoutMs: number): Promise<"ok" | "failing" | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const outcome = await Promise.race([
      (async () => ((await c.check()) === false ? "failing" : "ok"))(),
      new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs))),
    ]);
    return outcome;
  } catch {
    return "failing";
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the checks concurrently. Probes arriving while a run is in flight share it
 * (a burst of probes never multiplies the queries). Never says why beyond the
 * check's name: no address or error text leaves the process.
 */
export function readinessOf(checks: readonly ReadinessCheck[], timeoutMs = READINESS_CHECK_TIMEOUT_MS): () => Promise<Readiness> {
  let inFlight: Promise<Readiness> | null = null;
  return () =>
    (inFlight ??= (async () => {
      try {
        const results = await Promise.all(checks.map(async (c) => [c.name, await runCheck(c, timeoutMs)] as const));
        return { ready: results.every(([, r]) => r === "ok"), checks: Object.fromEntries(results) };
      } finally {
        inFlight = null;
      }
    })());
}
