import { ApiError, LIMITS } from "@svc/contract";
import { answerTestRows, initialLiveRows, newId, type PreparedRow, type ResultRow } from "@svc/domain";
import { announcePending, getLookup, insertLookup, type LookupRecord, type NewLookup } from "@svc/store";
import { storedRow } from "../requests/stored-row";
import { storeTestResource } from "../requests/test-resource";
import { testUsage } from "../requests/test-usage";
import type { Request, Response } from "express";
import type { Caller, Deps, Reply } from "../context";
import type { Handler } from "../http/routes";
import { refuseIfChecksDown } from "../requests/availability";
import { planRequest, type IdentifierBody, type Plan } from "../requests/plan";
import { quote, reserveAndStore } from "../requests/reserve";
import { clientGone } from "../http/client-gone";
import { awaitLookup } from "./await-lookup";
import { pollUrl, presentLookup, readRows } from "./present";

type LookupBody = IdentifierBody & { wait?: number; max_cost?: { amount: string | number } };
/** Lookups are planned in this process, so their prepared rows are at hand. */
type LookupPlan = Plan & { rows: PreparedRow[] };

/** POST /v1/lookup. */
export function createLookupHandler(deps: Deps): Handler {
  const handler: Handler = async ({ req, res, caller, body }: { req: Request; res: Response; caller: Caller | undefined; body: LookupBody }) => {
    if (!caller) throw new ApiError("unauthorized");
    const plan = await planRequest(deps, caller, body, "lookup");
    return caller.livemode ? createLiveLookup(deps, req, res, caller, plan, body) : createTestLookup(deps, req, res, caller, plan, body);
  };
  // The same request, retried after the one that created the lookup died: answer with it.
  handler.recover = async ({ res, caller, body }: { res: Response; caller: Caller | undefined; body: LookupBody }, lookupId: string) => {
    if (!caller) throw new ApiError("unauthorized");
    const inputs = [...(body.numbers ?? []), ...(body.emails ?? [])];
    const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
    return answerAfterWait(deps, res, caller, lookupId, waitSeconds * 1000, inputs);
  };
  return handler;
}

/** How long a live lookup's money may stay reserved before the sweeper closes it. */
const LIVE_RESERVATION_TTL_MS = 3600 * 1000;

/**
 * Live mode: refuse up front if a check has no working route, reserve the maximum
 * possible cost together with storing the lookup, hand it to the check-worker and
 * wait up to `wait` seconds for the answers.
 */
async function createLiveLookup(deps: Deps, req: Request, res: Response, caller: Caller, plan: LookupPlan, body: LookupBody): Promise<Reply> {
  await refuseIfChecksDown(deps, plan.checks);
  const q = await quote(deps, caller, plan, body.max_cost);
  const now = deps.now();
  const id = newId("lookup");
  const rows = initialLiveRows(plan.rows, plan.checks);
  const pending = rows.some((r) => r.checks.some((c) => c.status === "pending"));
  const expiresAt = new Date(now.getTime() + caller.retentionDays * 86_400_000);
  const reservationId = await reserveAndStore(deps, caller, q, plan.rows.length, { lookupId: id, expiresAt: new Date(now.getTime() + LIVE_RESERVATION_TTL_MS) }, (client) =>
    insertLookup(client, {
      id,
      accountId: caller.accountId,
      apiKeyId: caller.keyId,
      livemode: true,
      status: pending ? "pending" : "completed",
      checks: plan.checks,
      checksTotal: plan.checksTotal,
      webhookEndpointId: plan.webhookEndpointId,
      requestId: req.id,
      createdAt: now,
      completedAt: pending ? null : now,
      completesAt: null,
      expiresAt,
      rows: rows.map(storedRow),
    }),
    req.idempotencyClaim,
  );
  // A lost message is recovered by the check-worker's reconciler and the ledger's sweeper.
  const enqueue = pending
    ? deps.producer.enqueue("lookup.run", { lookupId: id }, { jobId: `run-${id}` })
    : deps.producer.enqueue("settle.reservation", { reservationId }, { jobId: `settle-${reservationId}` });
  await enqueue.catch((err) => req.log.warn({ err, lookupId: id }, "could not enqueue; the reconcilers will pick it up"));
  if (!pending) {
    const found = await getLookup(deps.store.pool, id, { accountId: caller.accountId, livemode: true }, now);
    if (!found) throw new ApiError("internal_error");
    return { status: 200, body: presentLookup(found.lookup, rows, deps.config.publicBaseUrl) };
  }
  const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
  return answerAfterWait(deps, res, caller, id, waitSeconds * 1000, rows.map((r) => r.input));
}

/**
 * Test mode: answers come from the documented table or a deterministic hash.
 * Pending test values are stored `pending` with their completion time; the
 * check-worker completes them on schedule and any read completes them when due.
 */
async function createTestLookup(deps: Deps, req: Request, res: Response, caller: Caller, plan: LookupPlan, body: LookupBody): Promise<Reply> {
  // Test mode is free, but max_cost is validated as in live mode.
  if (body.max_cost !== undefined) await quote(deps, caller, plan, body.max_cost);
  const now = deps.now();
  const answered = answerTestRows(plan.rows, plan.checks, now, false);
  if (answered.unavailable) {
    throw new ApiError("temporarily_unavailable", { message: "Every route for a requested check is down. Nothing was charged.", retryAfterSeconds: 5 });
  }
  const id = newId("lookup");
  const pending = answered.pendingSeconds > 0;
  const lookup: LookupRecord = {
    id,
    account_id: caller.accountId,
    api_key_id: caller.keyId,
    livemode: false,
    status: pending ? "pending" : "completed",
    checks: plan.checks,
    row_count: plan.rows.length,
    checks_total: plan.checksTotal,
    webhook_endpoint_id: plan.webhookEndpointId,
    completes_at: pending ? new Date(now.getTime() + answered.pendingSeconds * 1000) : null,
    announced_pending: false,
    created_at: now,
    completed_at: pending ? null : now,
    expires_at: new Date(now.getTime() + caller.retentionDays * 86_400_000),
  };
  const stored: NewLookup = {
    id,
    accountId: lookup.account_id,
    apiKeyId: lookup.api_key_id,
    livemode: false,
    status: lookup.status,
    checks: lookup.checks,
    checksTotal: lookup.checks_total,
    webhookEndpointId: lookup.webhook_endpoint_id,
    requestId: req.id,
    createdAt: now,
    completedAt: lookup.completed_at,
    completesAt: lookup.completes_at,
    expiresAt: lookup.expires_at,
    rows: answered.rows.map(storedRow),
    // Usage counts final answers; a pending test value's are known already (deterministic).
    usage: testUsage(plan.checks, pending ? answerTestRows(plan.rows, plan.checks, now, true).rows : answered.rows, now),
  };
  await storeTestResource(deps, req, id, (client) => insertLookup(client, stored), true);
  if (!pending) return { status: 200, body: presentLookup(lookup, answered.rows, deps.config.publicBaseUrl) };

  // Completion on schedule even if nobody polls (lookup.completed must still go out).
  await deps.producer
    .enqueue("lookup.complete-test", { lookupId: id }, { jobId: `complete-test-${id}`, delayMs: answered.pendingSeconds * 1000 })
    .catch((err) => req.log.warn({ err }, "could not schedule test lookup completion; reads and the sweeper will complete it"));
  const waitSeconds = Math.min(body.wait ?? LIMITS.defaultLookupWaitSeconds, deps.config.MAX_WAIT_SECONDS);
  return answerAfterWait(deps, res, caller, id, waitSeconds * 1000, answered.rows.map((r) => r.input));
}

/**
 * Waits for a stored lookup, then answers 200 if it completed or 202 if not. The
 * creating response shows the raw input (stored rows hold it masked), so rows are
 * re-labelled from `inputs`, the request's numbers then e-mails.
 */
export async function answerAfterWait(deps: Deps, res: Response, caller: Caller, id: string, waitMs: number, inputs: readonly string[]): Promise<Reply> {
  const withInput = (rows: ResultRow[]) => rows.map((r, i) => ({ ...r, input: inputs[i] ?? r.input }));
  let found = await awaitLookup(deps, caller, id, waitMs, clientGone(res));
  if (found.lookup.status === "pending" && !(await announcePending(deps.store.pool, id))) {
    // Completed between our last read and the 202: answer with the completed lookup.
    found = (await getLookup(deps.store.pool, id, { accountId: caller.accountId, livemode: caller.livemode }, deps.now())) ?? found;
  }
  const body = presentLookup(found.lookup, withInput(readRows(found.rows)), deps.config.publicBaseUrl);
  if (found.lookup.status === "completed") return { status: 200, body };
  return { status: 202, body, headers: { Location: pollUrl(deps.config.publicBaseUrl, id) } };
}
