import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { spreadsheetCsvRecord, spreadsheetCsvWriter } from "@svc/csv";
import { CHECKS, type CheckCode } from "@svc/domain";
import { streamJobRows, type StoredRow } from "@svc/store";
import type { Deps } from "../deps";
import { defineRoute, type RouteHandler } from "../http/define-route";
import { jobFinished, replicaHasFinishedJob, requireResults, visibleJob } from "./access";

/** A row as streamed from the store. */
type Row = StoredRow;

const RESERVED = new Set(["status", "registered", "billed"]);

/** An attribute's column: `<service>.<attribute>`, or `<service>.attr_<attribute>` where that would clash. */
export const attributeColumn = (service: CheckCode, attribute: string) => `${service}.${RESERVED.has(attribute) ? `attr_${attribute}` : attribute}`;

/** The CSV header, in the spec's order, for a job's checks. */
export function csvColumns(checks: readonly CheckCode[]): string[] {
  const base = ["row_no", "input_masked", "e164", "country", "number_status", "service", "status", "registered", "business", "checked_at", "cached", "billed", "kind", "email", "email_status"];
  const perService = checks.flatMap((svc) => [`${svc}.status`, `${svc}.registered`, ...CHECKS[svc].attributes.map((a) => attributeColumn(svc, a.name)), `${svc}.billed`]);
  return [...base, ...perService];
}

/** A row's cells in csvColumns' order (written by @svc/csv: quoting, and the spreadsheet formula guard). */
function csvCells(row: Row, checks: readonly CheckCode[]): unknown[] {
  const byService = new Map(row.checks.map((c) => [c.service, c]));
  const primaryCode = checks.find((c) => CHECKS[c].input === row.kind);
  const primary = primaryCode ? byService.get(primaryCode) : undefined;
  const cells: unknown[] = [
    row.row_no,
    row.input_masked,
    row.e164,
    row.country,
    row.number_status,
    primary?.service,
    primary?.status,
    primary?.registered,
    primary?.attributes?.business,
    primary?.checked_at,
    primary?.cached,
    primary?.billed,
    row.kind,
    row.email,
    row.email_status,
  ];
  for (const svc of checks) {
    const c = byService.get(svc);
    cells.push(c?.status, c?.registered, ...CHECKS[svc].attributes.map((a) => c?.attributes?.[a.name]), c?.billed);
  }
  return cells;
}

function ndjsonLine(row: Row): string {
  const { input_masked, ...rest } = row;
  return `${JSON.stringify({ row_no: rest.row_no, kind: rest.kind, input: input_masked, e164: rest.e164, country: rest.country, number_status: rest.number_status, email: rest.email, email_status: rest.email_status, checks: rest.checks })}\n`;
}

/**
 * GET /v1/jobs/{id}/download?format=csv|ndjson: every row in input order, streamed
 * from a database cursor in batches with backpressure, so memory stays flat
 * whatever the size of the job. A finished job streams from the read replica when it
 * has caught up with the job (checked in the snapshot the stream reads), else from
 * the primary; once the first byte is sent a failure can only cut the download short.
 */
export function downloadJobRoute(deps: Pick<Deps, "store" | "reads" | "now">): RouteHandler {
  return defineRoute("downloadJobResults")(async ({ caller, params, query, res, req }) => {
    const job = await visibleJob(deps, caller, params.id);
    requireResults(job);
    const format = query.format as "csv" | "ndjson";
    const checks = job.checks as CheckCode[];
    // A finished job's rows are final: the replica may stream them once it has replayed the finish.
    const replica = jobFinished(job) ? await deps.reads.snapshotWhere("download", (client) => replicaHasFinishedJob(client, job)) : (deps.reads.primaryRead("download") ?? null);
    const client = replica?.client ?? (await deps.store.pool.connect());
    let cutShort = false;
    try {
      const rows = streamJobRows(client, job.id);
      res.status(200);
      res.setHeader("Content-Type", format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
      res.setHeader("Content-Disposition", `attachment; filename="${job.id}.${format}"`);
      res.setHeader("Cache-Control", "no-store");
      if (format === "csv") res.write(spreadsheetCsvRecord(csvColumns(checks)));
      const encode =
        format === "csv"
          ? spreadsheetCsvWriter((row: Row) => csvCells(row, checks))
          : new Transform({
              writableObjectMode: true,
              transform(row: Row, _enc: BufferEncoding, done: TransformCallback) {
                done(null, ndjsonLine(row));
              },
            });
      await pipeline(rows, encode, res).catch((err) => {
        cutShort = true;
        if (!res.writableEnded) req.log.warn({ err }, "download interrupted");
        res.destroy();
      });
    } finally {
      // A replica connection cut short mid-stream is dropped rather than pooled with its snapshot open.
      if (replica) await replica.release(cutShort);
      else client.release();
    }
    return null;
  });
}
