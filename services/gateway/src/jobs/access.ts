import { ApiError } from "@svc/contract";
import { isId } from "@svc/domain";
import { getJob, type JobRecord } from "@svc/store";
import type { Caller, Deps } from "../context";

/** The message of every job 404 — absent, another account's or key's, purged results: the API does not say which (see the spec's `not_found`). */
export const NO_SUCH_JOB = "No such job.";

/**
 * The job if the caller may see it: same account and mode, and created by this
 * key unless it has `jobs:read_all`. Anything else is the same 404.
 */
export async function visibleJob(deps: Deps, caller: Caller, id: string, ownOnly?: boolean): Promise<JobRecord> {
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
