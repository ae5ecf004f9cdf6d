import type { Request } from "express";
import { ApiError } from "@svc/contract";
import { answerTestRows, initialLiveRows, newId, parseAmount, testProfileFor } from "@svc/domain";
import { insertJob, jobById, recordTestUsage, type NewJob } from "@svc/store";
import type { Caller, Deps, Reply } from "../context";
import type { Handler } from "../http/routes";
import { refuseIfChecksDown } from "../requests/availability";
import { planRequest, type IdentifierBody, type Plan } from "../requests/plan";
import { quote, reserveAndStore, type Quote } from "../requests/reserve";
import { storedRow } from "../requests/stored-row";
import { storeTestResource, testUsage } from "../requests/test-resource";
import { buildEstimate } from "./estimate";
import { presentJob } from "./present";

export type JobBody = IdentifierBody & { max_cost?: { amount: string | number }; progress_events?: boolean };

/** How long a live job's money may stay reserved before the sweeper closes it. */
const LIVE_JOB_RESERVATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** Limits broken by an uploaded file are reported against `file`. */
async function planForUpload(req: Request, plan: () => Promise<Plan>): Promise<Plan> {
  try {
    return await plan();
  } catch (err) {
    if (err instanceof ApiError && err.code === "too_many_numbers" && req.is("multipart/form-data")) {
      throw new ApiError("too_many_numbers", { param: "file", message: err.message });
    }
    throw err;
  }
}

/** POST /v1/jobs/estimate: counts and the maximum cost; stores nothing, calls no source, charges nothing. */
export function estimateJobHandler(deps: Deps): Handler {
  return async ({ req, caller, body }: { req: Request; caller: Caller | undefined; body: JobBody }) => {
    if (!caller) throw new ApiError("unauthorized");
    const plan = await planForUpload(req, () => planRequest(deps, caller, body, "estimate"));
    // max_cost refuses here exactly as POST /v1/jobs would (402 cost_limit_exceeded).
    const q = await quote(deps, caller, plan, body.max_cost);
    return { status: 200, body: await buildEstimate(deps, caller, plan, q) };
  };
}

/**
 * POST /v1/jobs (JSON or CSV upload). Test keys: answered at once, the job is
 * `completed` in the response (no job.completed event). Live keys: the maximum
 * cost is reserved together with storing the job, its rows and its chunks; the
 * chunks go to the check-worker and the response is the `queued` job.
 */
export function createJobHandler(deps: Deps): Handler {
  const handler: Handler = async ({ req, caller, body }: { req: Request; caller: Caller | undefined; body: JobBody }) => {
    if (!caller) throw new ApiError("unauthorized");
    const plan = await planForUpload(req, () => planRequest(deps, caller, body, "job"));
    if (caller.livemode) await refuseIfChecksDown(deps, plan.checks);
    const q = await quote(deps, caller, plan, body.max_cost);
    const estimate = await buildEstimate(deps, caller, plan, q);
    const id = newId("job");
    const now = deps.now();
    const base: Omit<NewJob, "status" | "rows" | "counters" | "finishedAt" | "chunkSize"> = {
      id,
      accountId: caller.accountId,
      apiKeyId: caller.keyId,
      livemode: caller.livemode,
      checks: plan.checks,
      checksTotal: plan.checksTotal,
      maxCostMicros: body.max_cost ? parseAmount(body.max_cost.amount) : null,
      estimate,
      webhookEndpointId: plan.webhookEndpointId,
      progressEvents: body.progress_events ?? false,
      resultsUrl: `${deps.config.publicBaseUrl}/v1/jobs/${id}/results`,
      requestId: req.id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + caller.retentionDays * 86_400_000),
    };
    return caller.livemode ? createLiveJob(deps, req, caller, plan, q, base) : createTestJob(deps, req, plan, base);
  };
  // The same request, retried after the one that created the job died: answer with it.
  handler.recover = async (_input, jobId: string) => createdJobReply(deps, jobId);
  return handler;
}

async function createdJobReply(deps: Deps, jobId: string): Promise<Reply> {
  const job = await jobById(deps.store.pool, jobId);
  if (!job) throw new ApiError("internal_error");
  return { status: 201, body: presentJob(job, job.estimate), headers: { Location: `${deps.config.publicBaseUrl}/v1/jobs/${jobId}` } };
}

async function createTestJob(deps: Deps, req: Request, plan: Plan, base: Omit<NewJob, "status" | "rows" | "counters" | "finishedAt" | "chunkSize">): Promise<Reply> {
  const now = deps.now();
  // Test answers are final at once; in a job a documented outage value reads as a source that could not answer.
  const rows = answerTestRows(plan.rows, plan.checks, now, true).rows.map((r, i) => {
    const prepared = plan.rows[i];
    const outage = prepared?.status === "valid" && testProfileFor(prepared)?.unavailable === true;
    return {
      ...r,
      checks: r.checks.map((c) => (outage || c.status === "pending" ? { ...c, status: "unknown" as const, registered: null, attributes: null } : c)),
    };
  });
  await storeTestResource(deps, req, base.id, async (client) => {
    await insertJob(client, {
      ...base,
      status: "completed",
      // `conclusive` counts billed answers; test answers never are.
      counters: { done: plan.checksTotal, conclusive: 0, nonBillable: plan.checksTotal },
      finishedAt: now,
      rows: rows.map(storedRow),
      chunkSize: 0,
    });
    // Test jobs count in usage like test lookups (live usage is recorded at settlement).
    await recordTestUsage(client, { accountId: base.accountId, apiKeyId: base.apiKeyId }, testUsage(plan, rows, now));
  });
  return createdJobReply(deps, base.id);
}

async function createLiveJob(
  deps: Deps,
  req: Request,
  caller: Caller,
  plan: Plan,
  q: Quote,
  base: Omit<NewJob, "status" | "rows" | "counters" | "finishedAt" | "chunkSize">,
): Promise<Reply> {
  const now = deps.now();
  const rows = initialLiveRows(plan.rows, plan.checks);
  const chunkSize = deps.config.JOB_CHUNK_ROWS;
  await reserveAndStore(deps, caller, q, plan.rows.length, { jobId: base.id, expiresAt: new Date(now.getTime() + LIVE_JOB_RESERVATION_TTL_MS) }, (client) =>
    insertJob(client, { ...base, status: "queued", counters: { done: 0, conclusive: 0, nonBillable: 0 }, finishedAt: null, rows: rows.map(storedRow), chunkSize }),
    req.idempotencyClaim,
  );
  const chunks = Math.ceil(rows.length / chunkSize);
  // A lost enqueue is repaired by the check-worker's chunk reconciler.
  await deps.producer
    .enqueueMany("job.chunk", Array.from({ length: chunks }, (_, chunkNo) => ({ payload: { jobId: base.id, chunkNo }, jobId: `chunk-${base.id}-${chunkNo}` })))
    .catch((err) => req.log.warn({ err, jobId: base.id }, "could not enqueue job chunks; the reconciler will"));
  return createdJobReply(deps, base.id);
}
