import { ApiError, LIMITS } from "@svc/contract";
import { countSettlements, notifyDispatcher } from "@svc/core";
import { FINAL_JOB_STATUSES, cancelJob, jobById, purgeJobResults, withTransaction } from "@svc/store";
import { publishCompletion } from "@svc/queues";
import type { Deps } from "../context";
import type { Handler } from "../http/routes";
import { clientGone } from "../http/client-gone";
import { jobFinished, visibleJob } from "./access";
import { presentJob } from "./present";


/**
 * GET /v1/jobs/{id}?wait=0..30: holds until the job has finished — final, and for a
 * cancelled job its rows in flight done too — woken by a notice sent after the
 * commit that finished and settled it, not by polling.
 */
export function getJobHandler(deps: Deps): Handler {
  return async ({ caller, params, query, res }) => {
    if (!caller) throw new ApiError("unauthorized");
    const waitMs = Math.min(Number(query.wait ?? 0), deps.config.MAX_WAIT_SECONDS, LIMITS.maxWaitSeconds) * 1000;
    const deadline = Date.now() + waitMs;
    const signal = clientGone(res);
    let job = await visibleJob(deps, caller, params.id ?? "");
    while (!jobFinished(job) && Date.now() < deadline && !signal.aborted && !deps.waiter.isClosed) {
      await deps.waiter.wait(job.id, deadline - Date.now(), signal);
      job = await visibleJob(deps, caller, job.id);
    }
    return { status: 200, body: presentJob(job) };
  };
}

/**
 * DELETE /v1/jobs/{id}: a running job is cancelled (unsent rows released, rows in
 * flight finish and are billed); a finished job's results are deleted now and
 * `purged_at` set (its status stays what it was). A cancelled job still finishing
 * its rows in flight is answered as it is (delete again once `finished_at` is set).
 * `jobs:write` acts on the jobs the key can read.
 */
export function deleteJobHandler(deps: Deps): Handler {
  return async ({ caller, params }) => {
    if (!caller) throw new ApiError("unauthorized");
    const job = await visibleJob(deps, caller, params.id ?? "", !caller.scopes.includes("jobs:read_all"));
    const now = deps.now();
    if (FINAL_JOB_STATUSES.includes(job.status)) {
      const purged = await withTransaction(deps.store.pool, (client) => purgeJobResults(client, job.id, now));
      if (purged) {
        countSettlements(purged.settlements);
        await notifyDispatcher(deps, purged.eventIds);
      }
    } else {
      // With nothing in flight the job finishes, and settles, in this transaction.
      const cancelled = await withTransaction(deps.store.pool, (client) => cancelJob(client, job.id, now));
      if (cancelled) {
        countSettlements(cancelled.settlements);
        await publishCompletion(deps.redis, deps.config.REDIS_PREFIX, job.id).catch(() => undefined);
        await notifyDispatcher(deps, cancelled.eventIds);
      }
    }
    const after = await jobById(deps.store.pool, job.id);
    if (!after) throw new ApiError("not_found");
    return { status: 200, body: presentJob(after) };
  };
}
