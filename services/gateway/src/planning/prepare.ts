import { ApiError, LIMITS, type ErrorCode, type JobRequest, type LookupRequest, type Static } from "@svc/contract";
import {
  CHECKS,
  emailFamilies,
  hasConsecutiveRun,
  hasLargeEmailFamily,
  isDocumentedTestValue,
  isTestValue,
  keyedDigest,
  prepareRows,
  resolveCheck,
  type CheckCode,
  type Digest,
  type InputKind,
  type PreparedRow,
} from "@svc/domain";

export type RequestKind = "lookup" | "job" | "estimate";

/** What planning reads of a lookup or job request (the contract's types): its identifiers, checks and webhook target. */
export type RequestedChecks = Pick<Static<typeof LookupRequest> | Static<typeof JobRequest>, "numbers" | "emails" | "checks" | "webhook_endpoint_id">;

/** What preparation needs to know of the caller (plain data: it also runs on intake threads). */
export type CallerFacts = { isSandbox: boolean; livemode: boolean };

/** An ApiError as plain data, so a refusal found on an intake thread can cross to the event loop. */
export type Refusal = { code: ErrorCode; param: string | null; message: string; suggestion?: string };

export function toRefusal(err: ApiError): Refusal {
  return { code: err.code, param: err.param, message: err.message, ...(err.suggestion ? { suggestion: err.suggestion } : {}) };
}

export function fromRefusal(r: Refusal): ApiError {
  return new ApiError(r.code, { param: r.param, message: r.message, ...(r.suggestion ? { suggestion: r.suggestion } : {}) });
}

/** An address family and its distinct members, as keyed digests (see daily-email-families). */
export type EmailFamily = readonly [family: string, members: readonly string[]];

/**
 * The CPU half of planning a request: everything that needs no database, cache or
 * Redis. Refusals are returned, not thrown, and split by where the I/O half must
 * raise them, so the order clients see errors in never depends on where this ran.
 */
export type Prepared = {
  checks: CheckCode[];
  /** Rows × checks of their input type. */
  checksTotal: number;
  rows: PreparedRow[];
  /** Refusals about shape and sizes: raised before any I/O check. */
  early: Refusal | null;
  /** Refusals about the rows (test values, enumeration): raised after check availability and the webhook target. */
  late: Refusal | null;
  families: EmailFamily[];
};

/** What the I/O half of planning (plan.ts) needs from this CPU half; the rows themselves stay where they were prepared. */
export type PlanFacts = Pick<Prepared, "checks" | "checksTotal" | "early" | "late" | "families"> & { counts: Record<InputKind, number> };

/** Resolves codes and aliases; unknown codes are caught by the schema, repeats here. */
function resolveChecks(names: readonly string[]): CheckCode[] {
  const seen = new Set<CheckCode>();
  return names.map((name, i) => {
    const code = resolveCheck(name);
    if (!code) throw new ApiError("invalid_request", { param: `checks[${i}]`, message: "Unknown check code." });
    if (seen.has(code)) throw new ApiError("invalid_request", { param: `checks[${i}]`, message: "A check is requested twice (codes and aliases name the same check)." });
    seen.add(code);
    return code;
  });
}

/** Shape and size rules, in the order clients see them. */
function sizeRules(body: RequestedChecks, caller: CallerFacts, kind: RequestKind): { checks: CheckCode[]; checksTotal: number } {
  const numbers = body.numbers?.length ?? 0;
  const emails = body.emails?.length ?? 0;
  const checks = resolveChecks(body.checks);
  const phoneChecks = checks.filter((c) => CHECKS[c].input === "number").length;
  const emailChecks = checks.length - phoneChecks;
  if (numbers + emails === 0) {
    throw new ApiError("invalid_request", { param: "numbers", message: "Send at least one number or e-mail address." });
  }
  const maxIdentifiers = kind === "lookup" ? LIMITS.lookupIdentifiers : caller.isSandbox ? LIMITS.sandboxJobIdentifiers : LIMITS.jobIdentifiers;
  if (numbers + emails > maxIdentifiers) {
    throw new ApiError("too_many_numbers", { message: `At most ${maxIdentifiers} numbers and e-mail addresses per request.` });
  }
  if (numbers > 0 && phoneChecks === 0) throw new ApiError("invalid_request", { param: "checks", message: "numbers were sent without a phone check." });
  if (emails > 0 && emailChecks === 0) throw new ApiError("invalid_request", { param: "checks", message: "emails were sent without an e-mail check." });
  const checksTotal = numbers * phoneChecks + emails * emailChecks;
  const maxPairs = kind === "lookup" ? LIMITS.lookupIdentifierChecks : LIMITS.jobIdentifierChecks;
  if (checksTotal > maxPairs) {
    throw new ApiError("invalid_request", { param: "checks", message: `Identifiers times applicable checks must not exceed ${maxPairs}.` });
  }
  return { checks, checksTotal };
}

/** Test-value rules for the key, then the enumeration guard; the first refusal or null. */
function rowRules(rows: readonly PreparedRow[], families: ReadonlyMap<string, ReadonlySet<string>>, caller: CallerFacts): Refusal | null {
  const paramOf = (r: PreparedRow) => `${r.kind === "number" ? "numbers" : "emails"}[${r.index}]`;
  if (caller.isSandbox) {
    const offending = rows.find((r) => !isDocumentedTestValue(r));
    if (offending) {
      return toRefusal(new ApiError("sandbox_magic_only", { param: paramOf(offending), suggestion: "See the documented test values, or get a personal test key at /get-test-key." }));
    }
  } else if (caller.livemode) {
    const offending = rows.find((r) => isTestValue(r));
    if (offending) return toRefusal(new ApiError("test_number_only", { param: paramOf(offending), suggestion: "Use a test key (svc_test_…) for test values." }));
  }
  if (hasConsecutiveRun(rows)) return toRefusal(new ApiError("suspected_enumeration", { param: "numbers", message: "The request contains 20 or more consecutive numbers." }));
  if (hasLargeEmailFamily(families)) {
    return toRefusal(
      new ApiError("suspected_enumeration", { param: "emails", message: "The request contains 20 or more addresses on one domain that differ only by digits or separators." }),
    );
  }
  return null;
}

/**
 * Parses, de-duplicates and judges a request's identifiers. `familyDigest` keys the
 * address-family digests (they may be stored, in the daily enumeration guard).
 */
export function prepareRequest(body: RequestedChecks, caller: CallerFacts, kind: RequestKind, familyDigest: Digest): Prepared {
  let sized: { checks: CheckCode[]; checksTotal: number };
  try {
    sized = sizeRules(body, caller, kind);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { checks: [], checksTotal: 0, rows: [], early: toRefusal(err), late: null, families: [] };
  }
  const rows = prepareRows(body.numbers ?? [], body.emails ?? []);
  const families = emailFamilies(rows, familyDigest);
  return { ...sized, rows, early: null, late: rowRules(rows, families, caller), families: [...families].map(([family, members]) => [family, [...members]]) };
}

const digests = new Map<string, Digest>();

/** The keyed digest of e-mail families for a secret (the key is imported once). */
export function familyDigest(secret: string): Digest {
  let digest = digests.get(secret);
  if (!digest) digests.set(secret, (digest = keyedDigest(secret)));
  return digest;
}

/** Rows per input kind (what a quote multiplies prices by). */
export function countByKind(rows: readonly PreparedRow[]): Record<InputKind, number> {
  const counts: Record<InputKind, number> = { number: 0, email: 0 };
  for (const r of rows) counts[r.kind] += 1;
  return counts;
}
