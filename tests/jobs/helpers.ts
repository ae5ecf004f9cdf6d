import type request from "supertest";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { parse } from "csv-parse/sync";
import { CheckResultSchema, EstimateSchema, JobSchema, MoneySchema, ProgressSchema, ResultRowSchema, ResultsPageSchema } from "@svc/contract";
import type { KeyMode, Scope } from "@svc/domain";
import type { StoredRow } from "@svc/store";
import { accountWithKey, bearer, type TestKey } from "../support/fixtures";
import type { TestGateway } from "../support/gateway";

export { PUBLIC_SANDBOX_KEY } from "@svc/domain";

export type Res = request.Response;
export type Query = Record<string, string | number>;

/** A check result as the API returns it. */
export type Check = { service: string; status: string; registered: boolean | null; attributes: Record<string, unknown> | null; cached: boolean; billed: boolean; checked_at: string | null };
/** A result item as the API returns it. */
export type Row = {
  row_no: number;
  kind: "number" | "email";
  input: string;
  e164: string | null;
  country: string | null;
  number_status: string | null;
  email: string | null;
  email_status: string | null;
  checks: Check[];
};

/**
 * The bulk-job endpoints, each as one supertest request against the in-process
 * gateway. Keys are rate limited to 10 requests a second (burst 20): tests that
 * send many requests make fresh keys with `newKey`.
 */
export function jobsApi(gw: TestGateway) {
  const http = () => gw.http();
  return {
    newKey: (options: { mode?: KeyMode; scopes?: Scope[]; accountId?: string; balanceMicros?: bigint } = {}): Promise<TestKey> =>
      accountWithKey(gw.store, gw.env.keyHashSecret, options),
    estimate: (key: string, body: unknown) => http().post("/v1/jobs/estimate").set(bearer(key)).send(body as object),
    create: (key: string, body: unknown, idempotencyKey?: string) => {
      const r = http().post("/v1/jobs").set(bearer(key));
      if (idempotencyKey !== undefined) r.set("Idempotency-Key", idempotencyKey);
      return r.send(body as object);
    },
    /** multipart/form-data with the CSV in part `file` (or `part`), plus text fields. */
    upload: (key: string, csv: string | Buffer, fields: Record<string, string> = {}, options: { path?: string; part?: string; filename?: string; idempotencyKey?: string } = {}) => {
      const r = http().post(options.path ?? "/v1/jobs").set(bearer(key));
      if (options.idempotencyKey !== undefined) r.set("Idempotency-Key", options.idempotencyKey);
      r.attach(options.part ?? "file", typeof csv === "string" ? Buffer.from(csv, "utf8") : csv, options.filename ?? "list.csv");
      for (const [name, value] of Object.entries(fields)) r.field(name, value);
      return r;
    },
    get: (key: string, id: string, query: Query = {}) => http().get(`/v1/jobs/${id}`).query(query).set(bearer(key)),
    results: (key: string, id: string, query: Query = {}) => http().get(`/v1/jobs/${id}/results`).query(query).set(bearer(key)),
    download: (key: string, id: string, query: Query = {}) => http().get(`/v1/jobs/${id}/download`).query(query).set(bearer(key)),
    remove: (key: string, id: string) => http().delete(`/v1/jobs/${id}`).set(bearer(key)),
  };
}

export type JobsApi = ReturnType<typeof jobsApi>;

/** Status, error code and `param` of a response, compared in one go for a readable diff. */
export function expectError(res: Res, status: number, code: string, param: string | null | undefined = undefined): void {
  const got = { status: res.status, code: res.body?.error?.code, ...(param !== undefined ? { param: res.body?.error?.param } : {}) };
  expect(got).toEqual({ status, code, ...(param !== undefined ? { param } : {}) });
}

/**
 * `n` valid, distinct US numbers (+1 212 …) that never form a run of consecutive
 * numbers (the enumeration guard refuses 20 in a row). `from` shifts the block.
 */
export function usNumbers(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => `+1212${2_000_000 + 2 * (from + i)}`);
}

/** i → "a", "b", …, "z", "ba", … (letters only, so every address is its own family). */
function letters(i: number): string {
  let s = "";
  do {
    s = String.fromCharCode(97 + (i % 26)) + s;
    i = Math.floor(i / 26);
  } while (i > 0);
  return s;
}

/** `n` valid, distinct addresses that the enumeration guard sees as unrelated. */
export function emailsList(n: number, domain = "corp.example"): string[] {
  return Array.from({ length: n }, (_, i) => `person${letters(i)}@${domain}`);
}

/** What the job API wrote for an account: jobs, their rows and chunks, reservations, ledger, usage, events. */
export async function storedFor(gw: TestGateway, accountId: string): Promise<{ jobs: number; rows: number; chunks: number; reservations: number; ledger: number; usage: number; events: number }> {
  const { rows } = await gw.store.pool.query(
    `SELECT (SELECT count(*)::int FROM jobs WHERE account_id = $1) AS jobs,
            (SELECT count(*)::int FROM result_rows r JOIN jobs j ON j.id = r.job_id WHERE j.account_id = $1) AS rows,
            (SELECT count(*)::int FROM job_chunks c JOIN jobs j ON j.id = c.job_id WHERE j.account_id = $1) AS chunks,
            (SELECT count(*)::int FROM reservations WHERE account_id = $1) AS reservations,
            (SELECT count(*)::int FROM ledger_entries WHERE account_id = $1) AS ledger,
            (SELECT count(*)::int FROM daily_usage WHERE account_id = $1) AS usage,
            (SELECT count(*)::int FROM events WHERE account_id = $1) AS events`,
    [accountId],
  );
  return rows[0];
}

export async function balanceOf(gw: TestGateway, accountId: string): Promise<{ balance: string; reserved: string }> {
  const { rows } = await gw.store.pool.query(`SELECT balance_micros::text AS balance, reserved_micros::text AS reserved FROM accounts WHERE id = $1`, [accountId]);
  return rows[0];
}

/** Every page of a job's results, following `next_cursor`; returns the rows and the page sizes. */
export async function allPages(api: JobsApi, key: string, id: string, query: Query = {}): Promise<{ rows: Row[]; pages: number[] }> {
  const rows: Row[] = [];
  const pages: number[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 200; guard += 1) {
    const res = await api.results(key, id, after ? { ...query, after } : query);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe("list");
    expectConforms("page", res.body);
    rows.push(...res.body.data);
    pages.push(res.body.data.length);
    expect(res.body.has_more).toBe(res.body.next_cursor !== null);
    if (!res.body.has_more) return { rows, pages };
    after = res.body.next_cursor;
  }
  throw new Error("paging did not end");
}

/** A check result without its timestamp, for comparing answers made at different times. */
export const answerOf = ({ checked_at: _at, ...rest }: Check) => rest;

/** Parses a CSV download strictly (RFC 4180, CRLF). */
export function parseCsv(text: string): string[][] {
  return parse(text, { record_delimiter: "\r\n", relax_column_count: false }) as string[][];
}

/** The documented test values, with the answers docs/test-mode.md gives them. */
export const TEST = {
  clean: "+12025550100",
  scam: "+12025550101",
  telemarketer: "+12025550102",
  lowSpam: "+12025550103",
  unassigned: "+12025550104",
  allUnknown: "+12025550105",
  suppressed: "+12025550106",
  slow: "+12025550107",
  outage: "+12025550108",
  canada: "+14165550100",
  germany: "+493023125000",
  australia: "+61491570156",
  invalid: "+999123",
  deliverable: "deliverable@example.com",
  undeliverable: "undeliverable@example.com",
  catchall: "catchall@example.com",
  disposable: "disposable@example.com",
  unknownMail: "unknown@example.com",
  suppressedMail: "suppressed@example.com",
  pendingMail: "pending@example.com",
  outageMail: "outage@example.com",
  invalidMail: "invalid@@example.com",
} as const;

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const schema of [MoneySchema, CheckResultSchema, ResultRowSchema, ProgressSchema, EstimateSchema]) ajv.addSchema(schema);
const validators = { job: ajv.compile(JobSchema), estimate: ajv.getSchema("Estimate")!, page: ajv.compile(ResultsPageSchema) };

/** The body conforms to the contract's (OpenAPI) schema for a job, an estimate or a results page. */
export function expectConforms(kind: keyof typeof validators, body: unknown): void {
  const validate = validators[kind];
  const ok = validate(body);
  expect({ kind, errors: ok ? null : validate.errors }).toEqual({ kind, errors: null });
}

/**
 * Result row `n` of a lookup or job as the store holds it: +1 202 555 01nn with one
 * spam answer ("ok", checked 2026-11-20), or that check still pending.
 */
export function storedNumberRow(n: number, status: "ok" | "pending" = "ok"): StoredRow {
  const done = status === "ok";
  return {
    row_no: n,
    kind: "number",
    input_masked: `+1 20* *** **${String(n).padStart(2, "0")}`,
    e164: `+120255501${String(n).padStart(2, "0")}`,
    country: "US",
    number_status: "valid",
    email: null,
    email_status: null,
    checks: [{ service: "number.spam", status, registered: done ? false : null, attributes: null, cached: false, billed: false, checked_at: done ? "2026-11-20T10:00:00.000Z" : null }],
  };
}
