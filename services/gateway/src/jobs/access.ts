import { ApiError } from "@svc/contract";
import { isId } from "@svc/domain";
import { FINAL_JOB_STATUSES, getJob, jobById, type JobRecord, type Sql } from "@svc/store";
import type { Caller } from "../caller";
import type { Deps } from "../deps";

/** The message of every job 404 — absent, another account's or key's, purged results: the API does not say which (see the spec's `not_found`). */
export const NO_SUCH_JOB = "No such job.";

/**
 * The job if the caller may see it: same account and mode, and created by this
 * key unless it has `jobs:read_all`. Anything else is the same 404.
 */
export async function visibleJob(deps: Pick<Deps, "store" | "now">, caller: Caller, id: string, ownOnly?: boolean): Promise<JobRecord> {
  if (!isId("job", id)) throw new ApiError("not_found", { message: NO_SUCH_JOB });
  const own = ownOnly ?? !caller.scopes.includes("jobs:read_all");
  const job = await getJob(deps.store.pool, id, { accountId: caller.accountId, livemode: caller.livemode, apiKeyId: own ? caller.keyId : null }, deps.now());
  if (!job) throw new ApiError("not_found", { message: NO_SUCH_JOB });
  return job;
}

/** A job whose results were purged: its results read as if the job did not exist. */
export function requireResults(job: JobRecord): void {
  if (job.purged_at) throw new ApiError("not_found", { message: NO_SUCH_JOB });
}

/**
 * Final and nothing of it still running: a cancelled job's rows in flight finish
 * (and are billed) after it reads `cancelled`; `finished_at` is set when they have.
 * The transaction that sets it also settles the job, so a finished job's cost is final.
 */
export const jobFinished = (job: JobRecord): boolean => FINAL_JOB_STATUSES.includes(job.status) && job.finished_at !== null;

/**
 * Whether the read replica behind `sql` holds a finished job's rows as they are
 * final: it has replayed the commit that finished the job (its copy of the job has
 * the primary's `finished_at`) and not a purge. Replay follows commit order and no
 * row of a job changes after that commit but for a purge, so every row is then
 * final on the replica too — exactly, where a row count would miss rows that are
 * there but not yet answered. `job` is the primary's view, already finished.
 * Run it in the same snapshot as the rows' read (ReplicaReads' snapshot reads).
 */
export async function replicaHasFinishedJob(sql: Sql, job: JobRecord): Promise<boolean> {
  const there = await jobById(sql, job.id);
  return there !== null && there.finished_at !== null && there.finished_at.getTime() === job.finished_at?.getTime() && there.purged_at === null;
}
