import { checkDef, type CheckCode } from "./checks";
import { parseNumber } from "./phone";
import type { Answer, CheckResult, ResultRow } from "./results";
import type { PreparedRow } from "./rows";
import { derivedAnswer, testProfileFor } from "./test-mode";

export type TestAnswers = {
  rows: ResultRow[];
  /** Seconds after creation at which the lookup completes; 0 = completes now. */
  pendingSeconds: number;
  /** A documented outage value is present: the request must fail with 503. */
  unavailable: boolean;
};

const SKIPPED: Record<string, CheckResult["status"]> = { invalid: "invalid", duplicate: "duplicate", suppressed: "suppressed" };

/**
 * Answers every requested check for every identifier of its input type, in test
 * mode. With `settled` false, rows of a pending test value carry `pending` checks;
 * the same call with `settled` true gives their final answers (deterministic, so a
 * worker can complete the lookup later from the stored identifiers alone).
 */
export function answerTestRows(rows: readonly PreparedRow[], checks: readonly CheckCode[], checkedAt: Date, settled: boolean): TestAnswers {
  let pendingSeconds = 0;
  let unavailable = false;
  const at = checkedAt.toISOString();
  // The checks that apply to each input kind, once per request rather than once per row.
  const checksFor = { number: checks.filter((c) => checkDef(c).input === "number"), email: checks.filter((c) => checkDef(c).input === "email") };
  const out = rows.map((row): ResultRow => {
    const profile = row.status === "valid" ? testProfileFor(row) : undefined;
    if (profile?.unavailable) unavailable = true;
    const rowStatus = profile?.rowStatus ?? row.status;
    const pending = !settled && (profile?.pendingSeconds ?? 0) > 0;
    if (profile?.pendingSeconds) pendingSeconds = Math.max(pendingSeconds, profile.pendingSeconds);
    const results = checksFor[row.kind].map((service): CheckResult => {
      const skipped = SKIPPED[rowStatus];
      if (skipped) return { service, status: skipped, registered: null, attributes: null, cached: false, billed: false, checked_at: null };
      if (pending) return { service, status: "pending", registered: null, attributes: null, cached: false, billed: false, checked_at: null };
      // A documented value's answer is shared: copied. A derived one is made for this row.
      const documented = profile?.answers[service];
      const answer: Answer = documented ?? derivedAnswer(service, row);
      return {
        service,
        status: answer.status,
        registered: answer.registered,
        attributes: answer.attributes ? (documented ? structuredClone(answer.attributes) : answer.attributes) : null,
        cached: false,
        billed: false,
        checked_at: at,
      };
    });
    return {
      row_no: row.rowNo,
      kind: row.kind,
      input: row.input,
      e164: row.e164,
      country: row.country,
      number_status: row.kind === "number" ? rowStatus : null,
      email: row.email,
      email_status: row.kind === "email" ? rowStatus : null,
      checks: results,
    };
  });
  return { rows: out, pendingSeconds, unavailable };
}

/** Rebuilds a prepared row from stored identifiers (for completing a pending test lookup). */
export function rowFromStored(stored: { row_no: number; kind: "number" | "email"; e164: string | null; email: string | null; status: PreparedRow["status"] }): PreparedRow {
  const parsed = stored.e164 ? parseNumber(stored.e164, undefined, { withType: true }) : null;
  return {
    rowNo: stored.row_no,
    kind: stored.kind,
    index: 0,
    input: stored.e164 ?? stored.email ?? "",
    status: stored.status,
    e164: stored.e164,
    country: parsed && parsed.valid ? parsed.country : null,
    numberType: parsed && parsed.valid ? parsed.numberType : undefined,
    email: stored.email,
    domain: stored.email ? stored.email.slice(stored.email.lastIndexOf("@") + 1) : null,
  };
}

/**
 * Live rows as first stored: every check of a valid identifier `pending`; rows
 * that are invalid or duplicate carry their final (free) status at once.
 */
export function initialLiveRows(rows: readonly PreparedRow[], checks: readonly CheckCode[]): ResultRow[] {
  return rows.map((row) => ({
    row_no: row.rowNo,
    kind: row.kind,
    input: row.input,
    e164: row.e164,
    country: row.country,
    number_status: row.kind === "number" ? row.status : null,
    email: row.email,
    email_status: row.kind === "email" ? row.status : null,
    checks: checks
      .filter((c) => checkDef(c).input === row.kind)
      .map((service) => ({
        service,
        status: row.status === "valid" ? "pending" : (SKIPPED[row.status] ?? "invalid"),
        registered: null,
        attributes: null,
        cached: false,
        billed: false,
        checked_at: null,
      })),
  }));
}
