import type { Request } from "express";
import { ApiError } from "@svc/contract";
import { newId, parseAmount } from "@svc/domain";
import { jobIdOf } from "@svc/queues";
import { insertJob, jobById, recordTestUsage, type NewJob } from "@svc/store";
import { intakeReader, type AcceptedIntake, type IntakeDeps } from "../bulk";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { defineRoute, type ReplyTo, type RouteHandler } from "../http/define-route";
import { refuseIfChecksDown } from "../planning/checks-down";
import { checkPlan, type PlanDeps } from "../planning/plan";
import { quote, type Quote } from "../pricing/quote";
import { reserveAndStore, type ReserveDeps } from "../pricing/reserve";
import { storeTestResource } from "../storing/test-resource";
import { buildEstimate, type Estimate } from "./estimate";
import { presentJob } from "./present";

/** How long a live job's money may stay reserved before the sweeper closes it. */
const LIVE_JOB_RESERVATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** Bulk routes plan, price and reserve like lookups, with their bodies read by the intake threads. */
export type JobCreationDeps = PlanDeps & ReserveDeps & IntakeDeps & Pick<Deps, "config" | "producer">;

/** POST /v1/jobs/estimate: counts and the maximum cost; stores nothing, calls no source, charges nothing. */
export function estimateJobRoute(deps: JobCreationDeps): RouteHandler {
  return defineRoute("estimateJob")(
    async ({ caller, body, read: intake }) => {
      const plan = await checkPlan(deps, caller, intake.plan, body, "estimate");
      // max_cost refuses here exactly as POST /v1/jobs would (402 cost_limit_exceeded).
      const q = await quote(deps, caller, plan, body.max_cost);
      return { status: 200, body: await buildEstimate(deps, caller, plan, intake, q) };
    },
    { reader: intakeReader(deps, "estimateJob") },
  );
}

/**
 * POST /v1/jobs (JSON or CSV upload). Test keys: answered at once, the job is
 * `completed` in the response (no job.completed event). Live keys: the maximum
 * cost is reserved together with storing the job, its rows and its chunks; the
 * chunks go to the check-worker and the response is the `queued` job. The rows
 * were rendered on the intake thread; here they are only written.
 */
export function createJobRoute(deps: JobCreationDeps): RouteHandler {
  return defineRoute("createJob")(
    async ({ req, caller, body, read: intake }) => {
      const plan = await checkPlan(deps, caller, intake.plan, body, "job");
      if (caller.livemode) await refuseIfChecksDown(deps, plan.checks);
      const q = await quote(deps, caller, plan, body.max_cost);
      const estimate = await buildEstimate(deps, caller, plan, intake, q);
      const { rows, resourceId: id } = intake;
      if (!rows || !id) throw new ApiError("internal_error");
      const now = deps.now();
      const job: NewJob = {
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
        rows,
        // Test jobs are final at once; `conclusive` counts billed answers, and test answers never are.
        ...(caller.livemode
          ? { status: "queued", counters: { done: 0, conclusive: 0, nonBillable: 0 }, finishedAt: null, chunkSize: deps.config.JOB_CHUNK_ROWS }
          : { status: "completed", counters: { done: plan.checksTotal, conclusive: 0, nonBillable: plan.checksTotal }, finishedAt: now, chunkSize: 0 }),
      };
      return caller.livemode ? createLiveJob(deps, req, caller, q, job) : createTestJob(deps, req, job, intake);
    },
    {
      reader: intakeReader(deps, "createJob", () => newId("job")),
      // The same request, retried after the one that created the job died: answer with it.
      recover: async (_input, jobId) => createdJobReply(deps, jobId),
    },
  );
}

/** What POST /v1/jobs answers: 201 with the job and its Location. */
type CreatedJob = ReplyTo<"createJob">;

async function createdJobReply(deps: Pick<Deps, "store" | "config">, jobId: string): Promise<CreatedJob> {
  const job = await jobById(deps.store.pool, jobId);
  if (!job) throw new ApiError("internal_error");
  // The estimate is stored as buildEstimate made it.
  return { status: 201, body: presentJob(job, job.estimate as Estimate), headers: { Location: `${deps.config.publicBaseUrl}/v1/jobs/${jobId}` } };
}

async function createTestJob(deps: Pick<Deps, "store" | "config">, req: Request, job: NewJob, intake: AcceptedIntake): Promise<CreatedJob> {
  await storeTestResource(deps, req.idempotencyClaim, job.id, async (client) => {
    await insertJob(client, job);
    // Test jobs count in usage like test lookups (live usage is recorded at settlement).
    // Streamed rows: the usage is known once the last row is rendered, which the COPY above waited for.
    const usage = intake.usageLater ? await intake.usageLater : intake.usage;
    if (usage) await recordTestUsage(client, { accountId: job.accountId, apiKeyId: job.apiKeyId }, usage);
  });
  return createdJobReply(deps, job.id);
}

async function createLiveJob(deps: JobCreationDeps, req: Request, caller: Caller, q: Quote, job: NewJob): Promise<CreatedJob> {
  await reserveAndStore(deps, caller, q, job.rows.count, { jobId: job.id, expiresAt: new Date(job.createdAt.getTime() + LIVE_JOB_RESERVATION_TTL_MS) }, (client) => insertJob(client, job), req.idempotencyClaim);
  const chunks = Math.ceil(job.rows.count / job.chunkSize);
  // A lost enqueue is repaired by the check-worker's chunk reconciler.
  await deps.producer
    .enqueueMany("job.chunk", Array.from({ length: chunks }, (_, chunkNo) => ({ payload: { jobId: job.id, chunkNo }, jobId: jobIdOf("job.chunk", { jobId: job.id, chunkNo }) })))
    .catch((err) => req.log.warn({ err, jobId: job.id }, "could not enqueue job chunks; the reconciler will"));
  return createdJobReply(deps, job.id);
}
