import { AMOUNT_PATTERN, LIMITS, schemas } from "@svc/sdk";
import { z } from "zod";

/**
 * The tools' input fields. A field that is also a field of an API request takes its
 * bounds from the contract's schema of that request (the one the gateway validates
 * with, bundled in @svc/sdk as `schemas`) and list lengths from the SDK's LIMITS, so
 * the API's rules reach the tools without an edit here.
 *
 * What stays this server's own: narrower bounds that keep an agent's arguments sane
 * (the length of one identifier, the page size), ids checked by their prefix, and
 * the fields the API does not have: confirm_max_cost and confirmation_token (the
 * confirmation step), idempotency_key (sent as a header). Check names are plain
 * strings, not the contract's enum: a check the API adds works without a new server,
 * and the API refuses one it does not know.
 */

/** The JSON Schema keywords read from the contract (TypeBox schemas are JSON Schema). */
type Bounds = { type?: unknown; minLength?: number; maxLength?: number; minimum?: number; maximum?: number; minItems?: number; maxItems?: number };

function stringOf(s: Bounds): z.ZodString {
  let out = z.string();
  if (s.minLength !== undefined) out = out.min(s.minLength);
  if (s.maxLength !== undefined) out = out.max(s.maxLength);
  return out;
}

function numberOf(s: Bounds): z.ZodNumber {
  let out = z.number();
  if (s.type === "integer") out = out.int();
  if (s.minimum !== undefined) out = out.min(s.minimum);
  if (s.maximum !== undefined) out = out.max(s.maximum);
  return out;
}

function arrayOf<T extends z.ZodType>(s: Bounds, item: T): z.ZodArray<T> {
  let out = z.array(item);
  if (s.minItems !== undefined) out = out.min(s.minItems);
  if (s.maxItems !== undefined) out = out.max(s.maxItems);
  return out;
}

const lookup = schemas.LookupRequest.properties;
const job = schemas.JobRequest.properties;
const wait = schemas.WaitQuery.properties.wait;
const results = schemas.ResultsQuery.properties;

// --- Only this server's ---------------------------------------------------------

export const confirmMaxCost = z
  .string()
  .regex(AMOUNT_PATTERN, 'an amount in USD such as "1.20"')
  .describe(
    'The amount the user approved, at least what confirmation_required quoted (e.g. "1.20"). Only together with that answer\'s confirmation_token, on a repeat of exactly the quoted call; never on a first call. The call then proceeds only if its maximum possible cost is at most this, and the API refuses anything dearer.',
  );
export const confirmationToken = z
  .string()
  .min(1)
  .max(512)
  .describe(
    "The confirmation_token from a confirmation_required answer (confirm.arguments), sent with confirm_max_cost once the user approved. Valid for a few minutes, only for exactly the call that was quoted (same tool, same arguments), and for one call: spent once that call is done or refused for good. After an error with retryable: true it is still good: repeat the identical call (same confirm_max_cost too) with it.",
  );
export const idempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/, "printable ASCII")
  .describe("Optional. The same key on a repeated call returns the first call's result instead of doing (and charging) it twice, for 24 hours.");

// --- From the contract ------------------------------------------------------------

const checkName = z.string().min(1).max(40);
const CHECKS_HELP = 'Check codes or aliases, e.g. ["spam"], ["whatsapp", "carrier"], ["email"]; every check runs for every identifier of its input type. See list_services.';
const numbersOf = (field: Bounds, max: number) => arrayOf(field, z.string().max(64)).max(max).optional().describe('Phone numbers with country code, e.g. "+14155550123".');
const emailsOf = (field: Bounds, max: number) => arrayOf(field, z.string().max(320)).max(max).optional().describe("E-mail addresses (the check says whether the mailbox exists, nothing else).");

/** lookup: a POST /v1/lookup body of at most LIMITS.lookupIdentifiers numbers and as many e-mails. */
export const lookupInput = {
  numbers: numbersOf(lookup.numbers, LIMITS.lookupIdentifiers),
  emails: emailsOf(lookup.emails, LIMITS.lookupIdentifiers),
  checks: arrayOf(lookup.checks, checkName).describe(CHECKS_HELP),
  wait: numberOf(lookup.wait).optional().describe(`Seconds to wait for every answer (default ${LIMITS.defaultLookupWaitSeconds}). Slower answers leave the lookup pending: read it with get_lookup.`),
};

/** estimate_job and create_job: a POST /v1/jobs body of at most LIMITS.jobIdentifiers numbers and as many e-mails. */
export const jobListInput = {
  numbers: numbersOf(job.numbers, LIMITS.jobIdentifiers),
  emails: emailsOf(job.emails, LIMITS.jobIdentifiers),
  checks: arrayOf(job.checks, checkName).describe(CHECKS_HELP),
};
export const webhookEndpointId = stringOf(job.webhook_endpoint_id).optional().describe("Optional verified webhook endpoint (we_…) to notify with job.completed.");

export const lookupId = stringOf(schemas.IdParam).regex(/^lkp_/, "a lookup id (lkp_…)").describe("The lookup id (lkp_…).");
export const jobId = stringOf(schemas.IdParam).regex(/^job_/, "a job id (job_…)").describe("The job id (job_…).");
/** `wait` of GET /v1/lookups/{id} and /v1/jobs/{id}, "Seconds (0-30) to wait " + what for. */
export const waitOf = (forWhat: string) => numberOf(wait).optional().describe(`Seconds (${wait.minimum}-${wait.maximum}) to wait ${forWhat}.`);

/** get_job_results: GET /v1/jobs/{id}/results, with a smaller page (an agent reads every row it asks for) and `registered` as a JSON boolean or null. */
export const resultsInput = {
  after: stringOf(results.after).optional().describe("next_cursor of the previous page."),
  limit: z.number().int().min(1).max(200).optional().describe("Rows per page, 1-200 (default 50)."),
  service: z.string().max(40).optional().describe("Check the filters apply to (default: the job's first check)."),
  status: stringOf(results.status).optional().describe('Only rows whose `service` check has this status, e.g. "ok", "unknown".'),
  registered: z.boolean().nullable().optional().describe("Only rows whose `service` answer is registered true / false / null (unknown)."),
};
