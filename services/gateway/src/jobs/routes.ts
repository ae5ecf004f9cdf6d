import type { Deps } from "../deps";
import type { RouteHandler } from "../http/define-route";
import { createJobRoute, estimateJobRoute, type JobCreationDeps } from "./create-job";
import { downloadJobRoute } from "./download";
import { deleteJobRoute, getJobRoute } from "./read-job";
import { listJobResultsRoute } from "./results";

/** What the jobs feature uses. */
export type JobDeps = JobCreationDeps & Pick<Deps, "waiter" | "logger" | "reads">;

/** /v1/jobs: estimate, create, read (and wait), cancel or purge, results pages and downloads. */
export function jobRoutes(deps: JobDeps): RouteHandler[] {
  return [estimateJobRoute(deps), createJobRoute(deps), getJobRoute(deps), deleteJobRoute(deps), listJobResultsRoute(deps), downloadJobRoute(deps)];
}
