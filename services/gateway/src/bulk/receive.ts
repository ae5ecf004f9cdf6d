import express, { type Request, type RequestHandler } from "express";
import { ApiError, ONE_MB, type RouteDef } from "@svc/contract";
import { networkOf } from "@svc/domain";
import type { Caller } from "../caller";
import type { Deps } from "../deps";
import { JSON_TYPES, refuseBodyUpFront } from "../http/body";
import { clientGone } from "../http/client-gone";
import type { BodyReader } from "../http/routes";
import { fromRefusal } from "../planning/prepare";
import { ownedBytes, receiveJobForm } from "./csv-upload";
import type { BulkIntake } from "./intake";
import type { BulkBody, BulkOperation, Intake, JobFields } from "./intake-task";

/** A bulk request read and planned on an intake thread, with the id its resource will have. */
export type AcceptedIntake = Extract<Intake, { ok: true }> & { resourceId: string | null };

export type IntakeDeps = Pick<Deps, "now"> & { bulk: BulkIntake };

/**
 * Whose share a bulk request uses: its account, or for the public sandbox key
 * (shared by everyone) the caller's network, as its rate limit counts it.
 */
export function intakeTenant(req: Request, caller: Caller): string {
  return caller.isSandbox ? `sandbox:${networkOf(req.ip ?? "")}` : `account:${caller.accountId}`;
}

/** Bodies received and not yet read, by request. */
const received = new WeakMap<Request, BulkBody>();

const UTF8 = /^utf-?8$/i;

/**
 * A bulk route's body, received but not decoded: JSON as bytes (decompressed, within
 * the limit), a CSV upload as its file and fields. Decoding, validation and planning
 * happen on an intake thread. A tenant whose share of the threads is full is
 * answered 503 before its body is read.
 */
function receiveBulkBody(deps: IntakeDeps, route: RouteDef): RequestHandler {
  const limit = route.bodyLimitBytes ?? ONE_MB;
  const raw = express.raw({ limit, type: JSON_TYPES });
  return (req, res, next) => {
    const refused = refuseBodyUpFront(req, route);
    if (refused) return next(refused);
    try {
      if (req.caller) deps.bulk.assertRoom(intakeTenant(req, req.caller));
    } catch (err) {
      return next(err);
    }
    if (req.is("multipart/form-data")) {
      receiveJobForm(req, limit).then((form) => {
        received.set(req, { type: "form", form });
        next();
      }, next);
      return;
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1];
    if (charset !== undefined && !UTF8.test(charset)) {
      return next(new ApiError("invalid_request", { message: "The request body must be UTF-8 encoded JSON." }));
    }
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      const bytes = Buffer.isBuffer(req.body) ? ownedBytes([req.body], req.body.length) : new Uint8Array(0);
      req.body = undefined;
      received.set(req, { type: "json", bytes });
      next();
    });
  };
}

/**
 * How a bulk route (POST /v1/jobs, POST /v1/jobs/estimate) takes its body: received
 * raw on the event loop, then read on an intake thread in the tenant's turn. The
 * handler gets the fields other than the identifiers as its body and the accepted
 * intake as `read`; a refusal becomes the client's error. `newResourceId` names what
 * the request may create (its rows are rendered with that id).
 */
export function intakeReader(deps: IntakeDeps, operation: BulkOperation, newResourceId?: () => string): BodyReader<JobFields, AcceptedIntake> {
  return {
    receive: (route) => receiveBulkBody(deps, route),
    async read(req, res, caller) {
      const body = received.get(req) as BulkBody;
      received.delete(req);
      const resourceId = newResourceId?.() ?? null;
      const intake = await deps.bulk.run(
        intakeTenant(req, caller),
        { operation, body, caller: { isSandbox: caller.isSandbox, livemode: caller.livemode }, now: deps.now().getTime(), jobId: resourceId },
        clientGone(res),
      );
      if (!intake.ok) throw fromRefusal(intake.refusal);
      return { body: intake.fields, read: { ...intake, resourceId }, hash: intake.hash };
    },
  };
}
