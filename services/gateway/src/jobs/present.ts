import { money } from "@svc/domain";
import type { JobRecord } from "@svc/store";

/** The API shape of a job (see the Job schema); `estimate` only in the creating response. */
export function presentJob(job: JobRecord, estimate?: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {
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
    results_url: job.results_url,
  };
  if (estimate) body.estimate = estimate;
  return body;
}
