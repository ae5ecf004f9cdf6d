import type { Deps } from "../deps";
import type { Handlers } from "../http/routes";
import { createJobHandler, estimateJobHandler, type JobCreationDeps } from "./create-job";
import { downloadJobHandler } from "./download";
import { deleteJobHandler, getJobHandler } from "./read-job";
import { listJobResultsHandler } from "./results";

/** What the jobs feature uses. */
export type JobDeps = JobCreationDeps & Pick<Deps, "waiter" | "logger" | "reads">;

/** /v1/jobs: estimate, create, read (and wait), cancel or purge, results pages and downloads. */
export function jobRoutes(deps: JobDeps): Handlers {
  return {
    estimateJob: estimateJobHandler(deps),
    createJob: createJobHandler(deps),
    getJob: getJobHandler(deps),
    deleteJob: deleteJobHandler(deps),
    listJobResults: listJobResultsHandler(deps),
    downloadJobResults: downloadJobHandler(deps),
  };
}
