import type { Cluster, Redis } from "ioredis";
import type { CheckCode } from "@svc/domain";
import { breakerKey, routesKey } from "./breaker";

/**
 * The checks whose every route is down right now, as the check-workers advertise
 * them: no route configured, or every route's breaker open. A check no worker has
 * advertised yet is not reported (its work waits in the queue).
 */
export async function checksWithAllRoutesDown(redis: Redis | Cluster, prefix: string, checks: readonly CheckCode[]): Promise<CheckCode[]> {
  if (checks.length === 0) return [];
  const lists = await redis.mget(...checks.map((c) => routesKey(prefix, c)));
  const down: CheckCode[] = [];
  const pending: Array<{ check: CheckCode; routes: string[] }> = [];
  checks.forEach((check, i) => {
    const raw = lists[i];
    if (!raw) return;
    const routes = JSON.parse(raw) as string[];
    if (routes.length === 0) down.push(check);
    else pending.push({ check, routes });
  });
  const keys = pending.flatMap((p) => p.routes.map((r) => breakerKey(prefix, r)));
  if (keys.length > 0) {
    const states = await redis.mget(...keys);
    let i = 0;
    for (const p of pending) {
      const open = p.routes.map(() => states[i++] === "open");
      if (open.every(Boolean)) down.push(p.check);
    }
  }
  return down;
}
