import type { JobRecord } from "@svc/store";

/** Event data for job events: ids, status and counters only (never a number or address). */
export function jobEventData(job: JobRecord, type: "job.completed" | "job.progress" | "job.failed"): Record<string, unknown> {
  const progress = { total: job.total, checks_total: job.checks_total, done: job.done, conclusive: job.conclusive, non_billable: job.non_billable };
  const resultsUrl = job.results_url ?? `/v1/jobs/${job.id}/results`;
  if (type === "job.progress") return { object: "job", id: job.id, status: job.status, progress };
  if (type === "job.failed") {
    return { object: "job", id: job.id, status: "failed", progress, failure: { code: job.failure_code, message: job.failure_message }, results_url: resultsUrl };
  }
  return { object: "job", id: job.id, status: "completed", progress, results_url: resultsUrl };
}
