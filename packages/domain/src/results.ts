import type { CheckCode, InputKind } from "./checks";

/**
 * Per-check status. `ok` is a conclusive answer (billed unless cached); every
 * other value is free. Clients must treat unknown future values as non-conclusive.
 */
export const CHECK_STATUSES = [
  "ok",
  "pending",
  "unknown",
  "unsupported_country",
  "invalid",
  "duplicate",
  "suppressed",
  "cancelled",
] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/** Status of the identifier itself, before any check runs. */
export type IdentifierStatus = "valid" | "invalid" | "duplicate" | "suppressed";

export type CheckResult = {
  service: CheckCode;
  status: CheckStatus;
  registered: boolean | null;
  attributes: Record<string, unknown> | null;
  cached: boolean;
  billed: boolean;
  checked_at: string | null;
};

/** What one check says of one identifier: from a source, the test-mode table or the spam score. */
export type Answer = { status: CheckStatus; registered: boolean | null; attributes: Record<string, unknown> | null };

export type ResultRow = {
  row_no: number;
  kind: InputKind;
  input: string;
  e164: string | null;
  country: string | null;
  number_status: IdentifierStatus | null;
  email: string | null;
  email_status: IdentifierStatus | null;
  checks: CheckResult[];
};

export function isConclusive(status: CheckStatus): boolean {
  return status === "ok";
}

/** `lookup.completed` summary: rows, and checks by their `registered` answer. */
export function summarise(rows: ReadonlyArray<{ checks: ReadonlyArray<Pick<CheckResult, "registered">> }>): { total: number; registered: number; not_registered: number; unknown: number } {
  let registered = 0;
  let notRegistered = 0;
  let unknown = 0;
  for (const row of rows) {
    for (const c of row.checks) {
      if (c.registered === true) registered += 1;
      else if (c.registered === false) notRegistered += 1;
      else unknown += 1;
    }
  }
  return { total: rows.length, registered, not_registered: notRegistered, unknown };
}
