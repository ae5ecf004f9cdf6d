import { ApiError } from "@svc/contract";
import type { CheckCode } from "@svc/domain";
import { checksWithAllRoutesDown } from "@svc/sources";
import type { Deps } from "../deps";

let cached: { at: number; key: string; down: CheckCode[] } | null = null;

/**
 * 503 before anything is reserved when every route of a requested check is down
 * (as the check-workers advertise it). Read at most once a second per check set.
 */
export async function refuseIfChecksDown(deps: Pick<Deps, "redis" | "config">, checks: readonly CheckCode[]): Promise<void> {
  const key = [...checks].sort().join(",");
  let down: CheckCode[];
  if (cached && cached.key === key && Date.now() - cached.at < 1_000) down = cached.down;
  else {
    down = await checksWithAllRoutesDown(deps.redis, deps.config.REDIS_PREFIX, checks).catch(() => []);
    cached = { at: Date.now(), key, down };
  }
  const first = checks.findIndex((c) => down.includes(c));
  if (first >= 0) {
    throw new ApiError("temporarily_unavailable", {
      param: `checks[${first}]`,
      message: "Every source for a requested check is unavailable right now. Nothing was charged.",
      retryAfterSeconds: 10,
    });
  }
}
