import type { ResultRow } from "@svc/domain";
import type { Wake } from "@svc/queues";
import { announcePending, getLookup, type NewLookup } from "@svc/store";
import type { Response } from "express";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { clientGone } from "../http/client-gone";
import type { ReplyTo } from "../http/define-route";
import { readRows } from "../storing/result-rows";
import { awaitLookup, type AwaitLookupDeps } from "./await-lookup";
import { lookupFromNotice } from "./notice-answer";
import { pollUrl, presentLookup } from "./present";

export type AnswerDeps = AwaitLookupDeps & Pick<Deps, "config">;

/** What POST /v1/lookup answers: 200 completed, or 202 pending with a Location to poll. */
export type LookupReply = ReplyTo<"createLookup">;

/**
 * Waits for a stored lookup, then answers 200 if it completed or 202 if not. The
 * creating response shows the raw input (stored rows hold it masked), so rows are
 * re-labelled from `inputs`, the request's numbers then e-mails.
 *
 * `early` is a wait on the lookup's completion notice registered before its work
 * was handed on (see waitFromNow): the lookup is then read once it has fired
 * instead of first right away — it cannot have completed unannounced meanwhile —
 * and awaitLookup carries on as usual with what is left of `waitMs`. A notice that
 * carries the completed checks answers without the read at all (lookupFromNotice).
 */
export async function answerAfterWait(deps: AnswerDeps, res: Response, caller: Caller, id: string, waitMs: number, inputs: readonly string[], early?: EarlyWait): Promise<LookupReply> {
  const withInput = (rows: ResultRow[]) => rows.map((r, i) => ({ ...r, input: inputs[i] ?? r.input }));
  const signal = early?.signal ?? clientGone(res);
  let remainingMs = waitMs;
  if (early) {
    const wake = await early.woken;
    const noticed = wake.answer === undefined ? null : lookupFromNotice(early.stored, wake.answer, deps.now());
    if (noticed) return { status: 200, body: presentLookup(noticed.lookup, withInput(readRows(noticed.rows)), deps.config.publicBaseUrl) };
    remainingMs = Math.max(0, early.deadline - Date.now());
  }
  let found = await awaitLookup(deps, caller, id, remainingMs, signal);
  if (found.lookup.status === "pending" && !(await announcePending(deps.store.pool, id))) {
    // Completed between our last read and the 202: answer with the completed lookup.
    found = (await getLookup(deps.store.pool, id, { accountId: caller.accountId, livemode: caller.livemode }, deps.now())) ?? found;
  }
  const body = presentLookup(found.lookup, withInput(readRows(found.rows)), deps.config.publicBaseUrl);
  if (found.lookup.status === "completed") return { status: 200, body };
  return { status: 202, body, headers: { Location: pollUrl(deps.config.publicBaseUrl, id) } };
}

/** A wait on a lookup's completion notice begun before its work was handed on, by the request that stored `stored`. */
export type EarlyWait = { woken: Promise<Wake>; deadline: number; signal: AbortSignal; stored: NewLookup };

/**
 * Starts waiting for `stored`'s completion notice now, for up to `waitMs` (or until
 * the client goes away): call it before enqueuing the work, so a notice sent however
 * soon after cannot be missed.
 */
export function waitFromNow(deps: Pick<Deps, "waiter">, res: Response, stored: NewLookup, waitMs: number): EarlyWait {
  const signal = clientGone(res);
  return { woken: deps.waiter.waitForAnswer(stored.id, waitMs, signal), deadline: Date.now() + waitMs, signal, stored };
}
