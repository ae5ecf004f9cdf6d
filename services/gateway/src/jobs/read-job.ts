import { ApiError, LIMITS } from "@svc/contract";
import { requestJobFinish } from "@svc/flows";
import { FINAL_JOB_STATUSES, cancelJob, jobById, purgeJobResults, withTransaction } from "@svc/store";
import type { Response } from "express";
import type { Deps } from "../deps";
import { clientGone } from "../http/client-gone";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { jobFinished, visibleJob } from "./access";
import { presentJob } from "./present";


/**
 * GET /v1/jobs/{id}?wait=0..30: holds until the job has finished — final, and for a
 * cancelled job its rows in flight done too — woken by a notice sent after the
 * commit that finished and settled it, not by polling.
 */
export function getJobRoute(deps: Pick<Deps, "store" | "config" | "waiter" | "now">): RouteHandler {
  return defineRoute("getJob")(async ({ caller, params, query, res }) => {
    const waitMs = Math.min(Number(query.wait ?? 0), deps.config.MAX_WAIT_SECONDS, LIMITS.maxWaitSeconds) * 1000;
    const deadline = Date.now() + waitMs;
    const signal = clientGone(res);
    let job = await visibleJob(deps, caller, params.id);
    while (!jobFinished(job) && Date.now() < deadline && !signal.aborted && !deps.waiter.isClosed) {
      await deps.waiter.wait(job.id, deadline - Date.now(), signal);
      job = await visibleJob(deps, caller, job.id);
    }
    return { status: 200, body: presentJob(job) };
  });
}

/**
 * DELETE /v1/jobs/{id}: a running job is cancelled (unsent rows released, rows in
 * flight finish and are billed); a finished job's results are deleted now and
 * `purged_at` set (its status stays what it was). A cancelled job still finishing
 * its rows in flight is answered as it is (delete again once `finished_at` is set).
 * `jobs:write` acts on the jobs the key can read.
 */
/** Deleting may ask the check-worker to finish a job (and wait for its notice). */
export type DeleteJobDeps = Pick<Deps, "store" | "waiter" | "producer" | "logger" | "now">;

export function deleteJobRoute(deps: DeleteJobDeps): RouteHandler {
  return defineRoute("deleteJob")(async ({ caller, params, res }) => {
    const job = await visibleJob(deps, caller, params.id, !caller.scopes.includes("jobs:read_all"));
    const now = deps.now();
    if (FINAL_JOB_STATUSES.includes(job.status)) {
      const purge = () => withTransaction(deps.store.pool, (client) => purgeJobResults(client, job.id, now));
      // Finished before jobs were settled at their finish: settled by the check-worker first, then purged.
      if ((await purge()) === "unsettled") {
        await finishInCheckWorker(deps, job.id, res);
        // Never a 200 that has deleted nothing: the caller asked for the rows to go.
        if ((await purge()) === "unsettled") throw new ApiError("temporarily_unavailable", { message: "The job's results could not be deleted yet; try again.", retryAfterSeconds: 5 });
      }
    } else {
      const cancelled = await withTransaction(deps.store.pool, (client) => cancelJob(client, job.id, now));
      // Nothing in flight: the job is finished and settled in one transaction by the check-worker.
      if (cancelled?.idle) await finishInCheckWorker(deps, job.id, res);
    }
    const after = await jobById(deps.store.pool, job.id);
    if (!after) throw new ApiError("not_found");
    return { status: 200, body: presentJob(after) };
  });
}

/** How long DELETE waits for the check-worker to finish a cancelled job; after that it answers with `finished_at` still null. */
const FINISH_WAIT_MS = 5_000;

/**
 * Asks the check-worker to finish (and settle) the job, and waits for the notice of
 * that commit, so a cancel with nothing in flight still answers with the job final
 * and its final cost. The wait begins before the message is sent: a notice however
 * soon cannot be missed. A message that cannot be sent (Redis down) is not waited
 * for: the check-worker's sweep finishes the job (reconcileCancelledJobs).
 */
async function finishInCheckWorker(deps: Pick<Deps, "waiter" | "producer" | "logger">, jobId: string, res: Response): Promise<void> {
  const gone = clientGone(res);
  const finished = deps.waiter.wait(jobId, FINISH_WAIT_MS, gone);
  const sent = await requestJobFinish(deps.producer, jobId).then(
    () => true,
    (err: unknown) => {
      deps.logger.warn({ err, jobId }, "job.finish not sent; the check-worker's sweep finishes the job");
      return false;
    },
  );
  if (sent) await finished;
}
