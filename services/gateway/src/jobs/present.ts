import type { JobSchema, Static } from "@svc/contract";
import { money } from "@svc/domain";
import type { JobRecord } from "@svc/store";
import type { Estimate } from "./estimate";

export type Job = Static<typeof JobSchema>;

/** The API shape of a job (see the Job schema); `estimate` only in the creating response. */
export function presentJob(job: JobRecord, estimate?: Estimate): Job {
  const body: Job = {
    id: job.id,
    object: "job",
    status: job.status,
    livemode: job.livemode,
    checks: job.checks,
    progress: { total: job.total, checks_total: job.checks_total, done: job.done, conclusive: job.conclusive, non_billable: job.non_billable },
    cost: { reserved: money(job.reserved_micros), charged: money(job.charged_micros) },
    max_cost: job.max_cost_micros === null ? null : money(job.max_cost_micros),
    webhook_endpoint_id: job.webhook_endpoint_id,
    progress_events: job.progress_events,
    created_at: job.created_at.toISOString(),
    started_at: job.started_at ? job.started_at.toISOString() : null,
    finished_at: job.finished_at ? job.finished_at.toISOString() : null,
    purged_at: job.purged_at ? job.purged_at.toISOString() : null,
    failure: job.failure_code ? { code: job.failure_code, message: job.failure_message ?? "" } : null,
    // The column is nullable (added after jobs existed); createJob writes it for every job, and the contract promises a URL.
    results_url: job.results_url as string,
  };
  if (estimate) body.estimate = estimate;
  return body;
}
