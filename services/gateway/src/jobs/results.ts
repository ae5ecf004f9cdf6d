import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "@svc/contract";
import { CHECKS, resolveCheck, type CheckCode } from "@svc/domain";
import { jobRowsPage, type RowFilter } from "@svc/store";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { readRows } from "../storing/result-rows";
import { jobFinished, replicaHasFinishedJob, requireResults, visibleJob } from "./access";

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1_000;

/**
 * Cursors are opaque and tamper-proof: the job, the filter and the last row sent,
 * signed with a server key. A cursor from another job or another filter, or one
 * changed by a single character, is `400 invalid_cursor`.
 */
function sign(secret: string, payload: string): string {
  return createHmac("sha256", `cursor:${secret}`).update(payload).digest("base64url").slice(0, 24);
}

export function encodeCursor(secret: string, listing: string, lastRowNo: number): string {
  const payload = Buffer.from(JSON.stringify({ l: listing, r: lastRowNo })).toString("base64url");
  return `${payload}.${sign(secret, payload)}`;
}

export function decodeCursor(secret: string, listing: string, cursor: string): number {
  const invalid = () => new ApiError("invalid_cursor", { param: "after" });
  const [payload, signature, extra] = cursor.split(".");
  if (!payload || !signature || extra !== undefined) throw invalid();
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid();
  let parsed: { l?: unknown; r?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (parsed.l !== listing || typeof parsed.r !== "number" || !Number.isInteger(parsed.r) || parsed.r < 0) throw invalid();
  return parsed.r;
}

/**
 * GET /v1/jobs/{id}/results: rows in input order (numbers, then e-mails), each
 * with all its checks; `limit` 1-1000 (default 100); filters on one service's
 * answer (default: the job's first check), and with a filter only rows of that
 * service's input type. The job's state comes from the primary; a finished job's
 * rows from the read replica when it has caught up with the job (else the primary).
 */
export function listJobResultsRoute(deps: Pick<Deps, "store" | "config" | "reads" | "now">): RouteHandler {
  return defineRoute("listJobResults")(async ({ caller, params, query }) => {
    const job = await visibleJob(deps, caller, params.id);
    // Before anything that reads the query: purged results answer exactly as a job that does not exist.
    requireResults(job);
    const service = query.service ? (resolveCheck(query.service) as CheckCode) : (job.checks[0] as CheckCode);
    if (!job.checks.includes(service)) throw new ApiError("invalid_request", { param: "service", message: "service must be one of the job's checks." });
    const filtered = query.registered !== undefined || query.status !== undefined;
    const filter: RowFilter | null = filtered
      ? {
          service,
          kind: CHECKS[service].input,
          ...(query.registered !== undefined ? { registered: query.registered === "null" ? null : query.registered === "true" } : {}),
          ...(query.status !== undefined ? { status: query.status } : {}),
        }
      : null;
    // Without a filter every service lists the same rows, so the cursor is the job's alone.
    const listing = filtered ? `${job.id}|${service}|${query.registered ?? ""}|${query.status ?? ""}` : job.id;
    const after = query.after !== undefined ? decodeCursor(deps.config.KEY_HASH_SECRET, listing, query.after) : 0;
    const limit = query.limit ?? DEFAULT_PAGE;
    // A finished job's rows are final: the replica may serve them once it has replayed the finish.
    const fromReplica = jobFinished(job)
      ? await deps.reads.read(
          "results",
          async (sql) => ((await replicaHasFinishedJob(sql, job)) ? jobRowsPage(sql, job.id, after, limit + 1, filter) : null),
          (page) => page !== null,
          true,
        )
      : deps.reads.primaryRead("results");
    const rows = fromReplica?.value ?? (await jobRowsPage(deps.store.pool, job.id, after, limit + 1, filter));
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = page[page.length - 1];
    return {
      status: 200,
      body: {
        object: "list",
        data: readRows(page),
        has_more: hasMore,
        next_cursor: hasMore && last ? encodeCursor(deps.config.KEY_HASH_SECRET, listing, last.row_no) : null,
      },
    };
  });
}
