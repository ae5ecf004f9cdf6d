import { LIMITS, type Estimate, type Job, type Lookup, type Money, type ResultRow } from "@svc/sdk";

/**
 * Concise shapes of the API's objects for an agent: every fact it can act on
 * (ids, statuses, answers, money, what to call next), without timestamps of
 * individual checks or fields that are null. Amounts stay decimal strings in USD.
 */

const amount = (m: Money | null | undefined): string | null => (m ? m.amount : null);

function compact<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

export type RowOut = Record<string, unknown>;

/** One identifier's answers: its normalised form and status, then every check. */
export function presentRow(r: ResultRow): RowOut {
  return compact({
    row: r.row_no,
    kind: r.kind,
    input: r.input,
    e164: r.e164,
    email: r.email,
    country: r.country,
    status: r.kind === "email" ? r.email_status : r.number_status,
    checks: r.checks.map((c) =>
      compact({
        service: c.service,
        status: c.status,
        registered: c.registered,
        attributes: c.attributes && Object.keys(c.attributes).length ? c.attributes : null,
        cached: c.cached || null,
        billed: c.billed,
      }),
    ),
  });
}

export function presentLookup(l: Lookup): Record<string, unknown> {
  const billed = l.results.reduce((n, r) => n + r.checks.filter((c) => c.billed).length, 0);
  return compact({
    id: l.id,
    status: l.status,
    livemode: l.livemode,
    checks: l.checks,
    summary: l.summary,
    billed_checks: billed,
    rows: l.results.map(presentRow),
    next:
      l.status === "pending"
        ? `Some checks are still running: call get_lookup with id "${l.id}" and wait: ${LIMITS.maxWaitSeconds} (free).`
        : null,
  });
}

const FINAL = new Set(["completed", "failed", "cancelled"]);

/** Final and nothing still running (a cancelled job may finish rows already sent). */
export const jobFinished = (j: Job): boolean => j.finished_at != null || j.status === "completed" || j.status === "failed";

export function presentJob(j: Job): Record<string, unknown> {
  const p = j.progress;
  const percent = p.checks_total > 0 ? Math.floor((p.done / p.checks_total) * 1000) / 10 : 100;
  const finished = jobFinished(j);
  let next: string;
  if (j.purged_at) next = "Its results can no longer be read (get_job_results answers not_found).";
  else if (finished) next = `Read the answers with get_job_results (id "${j.id}"), page by page.`;
  else if (FINAL.has(j.status)) next = `Cancelled; rows already sent are finishing. Call get_job again with wait: ${LIMITS.maxWaitSeconds}.`;
  else next = `Still ${j.status}: call get_job with id "${j.id}" and wait: ${LIMITS.maxWaitSeconds} to follow it (free).`;
  return compact({
    id: j.id,
    status: j.status,
    finished,
    livemode: j.livemode,
    checks: j.checks,
    progress: { ...p, percent },
    cost: { reserved: amount(j.cost.reserved), charged: amount(j.cost.charged), max_cost: amount(j.max_cost), currency: "USD" },
    failure: j.failure,
    created_at: j.created_at,
    finished_at: j.finished_at,
    purged_at: j.purged_at,
    next,
  });
}

export function presentEstimate(e: Estimate): Record<string, unknown> {
  return {
    livemode: e.livemode,
    rows: e.rows,
    numbers: e.numbers,
    emails: e.emails,
    checks_total: e.checks_total,
    cached_answers: e.cached_answers,
    billable_checks_max: e.billable_checks_max,
    max_cost: e.max_cost.amount,
    currency: "USD",
    by_check: e.by_check.map((b) => ({ service: b.service, rows: b.rows, cached: b.cached, unit_price: b.unit_price.amount, max_cost: b.max_cost.amount })),
  };
}
