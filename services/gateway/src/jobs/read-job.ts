import { ApiError, LIMITS } from "@svc/contract";
import { notifyDispatcher } from "@svc/core";
import { FINAL_JOB_STATUSES, cancelJob, jobById, purgeJobResults, withTransaction } from "@svc/store";
import { publishCompletion } from "@svc/queues";
import type { Deps } from "../context";
import type { Handler } from "../http/routes";
import { clientGone } from "../http/client-gone";
import { visibleJob } from "./access";
import { presentJob } from "./present";

/** GET /v1/jobs/{id}?wait=0..30: holds until the job reaches a final status (woken by a notice, not by polling). */
export function getJobHandler(deps: Deps): Handler {
  return async ({ caller, params, query, res }) => {
    if (!caller) throw new ApiError("unauthorized");
    const waitMs = Math.min(Number(query.wait ?? 0), deps.config.MAX_WAIT_SECONDS, LIMITS.maxWaitSeconds) * 1000;
    const deadline = Date.now() + waitMs;
    const signal = clientGone(res);
    let job = await visibleJob(deps, caller, params.id ?? "");
    while (!FINAL_JOB_STATUSES.includes(job.status) && Date.now() < deadline && !signal.aborted && !deps.waiter.isClosed) {
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
      if (purged) await notifyDispatcher(deps, purged.eventIds);
    } else {
      const cancelled = await withTransaction(deps.store.pool, (client) => cancelJob(client, job.id, now));
      if (cancelled) {
        await publishCompletion(deps.redis, deps.config.REDIS_PREFIX, job.id).catch(() => undefined);
        const { rows } = await deps.store.pool.query<{ id: string }>(`SELECT id FROM reservations WHERE job_id = $1`, [job.id]);
        if (rows[0]) {
          await deps.producer.enqueue("settle.reservation", { reservationId: rows[0].id }, { jobId: `settle-${rows[0].id}-cancel` }).catch(() => undefined);
        }
      }
    }
    const after = await jobById(deps.store.pool, job.id);
    if (!after) throw new ApiError("not_found");
    return { status: 200, body: presentJob(after) };
  };
}
