import { checkDef, coversCountry, isBillable, parseNumber, type Answer, type CheckCode, type CheckResult, type IdentifierStatus } from "@svc/domain";
import type { CheckRunner, Identifier } from "@svc/sources";
import type { Logger } from "@svc/process";
import { metrics } from "@svc/metrics";
import { cacheAnswers, cachedAnswers, identifierHash, type Store } from "@svc/store";

/**
 * A stored row with checks still to answer (lookup rows and job rows alike).
 * `country` is the one the gateway's parse stored with `e164`, when the row was read
 * with it (a live lookup's claim); without it the number is parsed again here.
 */
export type PendingRow = { row_no: number; kind: "number" | "email"; e164: string | null; country?: string | null; email: string | null; row_status: string; checks: CheckResult[] };

/** Checks whose source reads the line type (the spam score counts VoIP ranges): only these pay for a parse when the country is stored. */
const READS_LINE_TYPE: ReadonlySet<CheckCode> = new Set(["number.spam"]);

/**
 * What a source is asked about `row` for `check`. A stored e164 passed the gateway's
 * parse (the same libphonenumber), so its stored country is what parsing it again
 * gives. The line type is not stored: only a check that reads it, for a country it
 * covers (else it answers unsupported_country unasked), parses for it.
 */
function identifierOf(row: PendingRow, check: CheckCode): Identifier {
  const domain = row.email ? row.email.slice(row.email.lastIndexOf("@") + 1).toLowerCase() : null;
  if (row.e164 && row.country !== undefined && (!READS_LINE_TYPE.has(check) || !coversCountry(check, row.country))) {
    return { e164: row.e164, email: row.email, domain, country: row.country, numberType: undefined };
  }
  const parsed = row.e164 ? parseNumber(row.e164, undefined, { withType: true }) : null;
  const valid = parsed && parsed.valid ? parsed : null;
  return { e164: row.e164, email: row.email, domain, country: valid ? valid.country : null, numberType: valid ? valid.numberType : undefined };
}

/**
 * Answers every pending check of `rows`: from the answer cache first (marked
 * `cached`, never billed), then, grouped by check, from the check's routes in
 * batches. Returns each row's full check list with the pending entries filled in
 * (`billed` set by the one rule), and the fresh conclusive answers for the cache.
 */
export async function answerRows(
  deps: { store: Store; runner: CheckRunner; cacheSecret: string; now: () => Date },
  rows: readonly PendingRow[],
): Promise<{ rows: Array<{ row_no: number; checks: CheckResult[] }>; fresh: FreshAnswers }> {
  const started = deps.now();
  const checks = [...new Set(rows.flatMap((r) => r.checks.filter((c) => c.status === "pending").map((c) => c.service)))];
  const hashes = new Map(rows.map((r) => [r.row_no, identifierHash(deps.cacheSecret, (r.e164 ?? r.email ?? "") as string)]));
  const cache = new Map<CheckCode, Awaited<ReturnType<typeof cachedAnswers>>>();
  for (const check of checks) cache.set(check, await cachedAnswers(deps.store.pool, check, [...hashes.values()], started));

  const fresh: FreshAnswers = new Map();
  const answers = new Map<string, CheckResult>();
  const key = (rowNo: number, check: CheckCode) => `${rowNo}|${check}`;
  await Promise.all(
    checks.map(async (check) => {
      const ask: Array<{ row: PendingRow; id: Identifier; hash: Buffer }> = [];
      for (const row of rows) {
        if (!row.checks.some((c) => c.service === check && c.status === "pending")) continue;
        const hash = hashes.get(row.row_no) as Buffer;
        const hit = cache.get(check)?.get(hash.toString("hex"));
        if (hit) {
          answers.set(key(row.row_no, check), { service: check, status: hit.status, registered: hit.registered, attributes: hit.attributes, cached: true, billed: false, checked_at: hit.checkedAt.toISOString() });
          metrics.checkAnswers().inc({ check, source: "cache", outcome: hit.status });
          continue;
        }
        const id = identifierOf(row, check);
        if (!coversCountry(check, id.country)) {
          answers.set(key(row.row_no, check), { service: check, status: "unsupported_country", registered: null, attributes: null, cached: false, billed: false, checked_at: started.toISOString() });
          metrics.checkAnswers().inc({ check, source: "coverage", outcome: "unsupported_country" });
          continue;
        }
        ask.push({ row, id, hash });
      }
      const got = ask.length > 0 ? await deps.runner.runMany(check, ask.map((a) => a.id)) : [];
      const at = deps.now().toISOString();
      ask.forEach(({ row, hash }, i) => {
        const answer = got[i] as Answer;
        if (answer.status === "ok") fresh.set(check, [...(fresh.get(check) ?? []), { hash, answer }]);
        const result: CheckResult = { service: check, status: answer.status, registered: answer.registered, attributes: answer.attributes, cached: false, billed: false, checked_at: at };
        answers.set(key(row.row_no, check), { ...result, billed: isBillable(row.row_status as IdentifierStatus, result) });
      });
    }),
  );

  return {
    rows: rows.map((row) => ({
      row_no: row.row_no,
      checks: row.checks.map((c) => (c.status === "pending" ? (answers.get(key(row.row_no, c.service)) ?? c) : c)),
    })),
    fresh,
  };
}

/** Fresh conclusive answers by check, keyed by identifier hash. */
export type FreshAnswers = Map<CheckCode, Array<{ hash: Buffer; answer: Answer }>>;

/**
 * Stores fresh answers for reuse — only after the answers they came with are
 * committed: cached first, a run that died before its commit would find its own
 * answers on the retry and mark them `cached`, so they would never be billed.
 * Best effort: a cache write that fails costs only a later cache miss.
 */
export async function cacheFreshAnswers(deps: { store: Store; now: () => Date; logger: Logger }, fresh: FreshAnswers): Promise<void> {
  const now = deps.now();
  try {
    for (const [check, entries] of fresh) {
      await cacheAnswers(deps.store.pool, check, entries, now, new Date(now.getTime() + checkDef(check).cacheTtlSeconds * 1000));
    }
  } catch (err) {
    deps.logger.warn({ err }, "answers not cached");
  }
}
