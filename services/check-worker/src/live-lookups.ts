import { checkDef, isBillable, parseNumber, type Answer, type CheckCode, type CheckResult, type IdentifierStatus } from "@svc/domain";
import { lookupCompletedData, type WorkerContext } from "@svc/core";
import { publishCompletion } from "@svc/queues";
import type { CheckRunner, Identifier } from "@svc/sources";
import {
  cacheAnswers,
  cachedAnswers,
  completeLookup,
  identifierHash,
  pendingLookupRows,
  recordEvent,
  withTransaction,
} from "@svc/store";

type PendingRow = Awaited<ReturnType<typeof pendingLookupRows>>[number];

/** Countries a check covers (`number.spam`: US, CA, DE); others are `unsupported_country`, free. */
function supported(check: CheckCode, country: string | null): boolean {
  const countries = checkDef(check).countries;
  return countries === null || (country !== null && countries.includes(country));
}

function identifierOf(row: PendingRow): Identifier {
  const parsed = row.e164 ? parseNumber(row.e164) : null;
  const valid = parsed && parsed.valid ? parsed : null;
  return {
    e164: row.e164,
    email: row.email,
    domain: row.email ? row.email.slice(row.email.lastIndexOf("@") + 1).toLowerCase() : null,
    country: valid ? valid.country : null,
    numberType: valid ? valid.numberType : undefined,
  };
}

/**
 * Answers every pending check of a live lookup — from the answer cache (marked
 * `cached`, never billed) or the check's routes — then completes the lookup in one
 * transaction and hands its reservation to the billing-ledger. Re-running after a
 * crash asks the sources again but completes, and so bills, only once.
 */
export async function runLiveLookup(ctx: WorkerContext, runner: CheckRunner, cacheSecret: string, lookupId: string): Promise<void> {
  const { rows: found } = await ctx.store.pool.query<{ status: string }>(`SELECT status FROM lookups WHERE id = $1 AND livemode = true`, [lookupId]);
  if (found[0]?.status !== "pending") return;
  const rows = await pendingLookupRows(ctx.store.pool, lookupId);
  const started = ctx.now();

  // Cached answers first, one query per check.
  const checks = [...new Set(rows.flatMap((r) => r.checks.filter((c) => c.status === "pending").map((c) => c.service)))];
  const hashOf = (row: PendingRow) => identifierHash(cacheSecret, (row.e164 ?? row.email ?? "") as string);
  const cache = new Map<CheckCode, Awaited<ReturnType<typeof cachedAnswers>>>();
  for (const check of checks) cache.set(check, await cachedAnswers(ctx.store.pool, check, rows.map(hashOf), started));

  // Everything not cached, grouped by check, goes to the check's routes in batches.
  const fresh = new Map<CheckCode, Array<{ hash: Buffer; answer: Answer }>>();
  const answers = new Map<string, CheckResult>();
  const key = (rowNo: number, check: CheckCode) => `${rowNo}|${check}`;
  await Promise.all(
    checks.map(async (check) => {
      const ask: Array<{ row: PendingRow; id: Identifier; hash: Buffer }> = [];
      for (const row of rows) {
        if (!row.checks.some((c) => c.service === check && c.status === "pending")) continue;
        const hash = hashOf(row);
        const hit = cache.get(check)?.get(hash.toString("hex"));
        if (hit) {
          answers.set(key(row.row_no, check), { service: check, status: hit.status, registered: hit.registered, attributes: hit.attributes, cached: true, billed: false, checked_at: hit.checkedAt.toISOString() });
          continue;
        }
        const id = identifierOf(row);
        if (!supported(check, id.country)) {
          answers.set(key(row.row_no, check), { service: check, status: "unsupported_country", registered: null, attributes: null, cached: false, billed: false, checked_at: ctx.now().toISOString() });
          continue;
        }
        ask.push({ row, id, hash });
      }
      const got = ask.length > 0 ? await runner.runMany(check, ask.map((a) => a.id)) : [];
      const at = ctx.now().toISOString();
      ask.forEach(({ row, hash }, i) => {
        const answer = got[i] as Answer;
        if (answer.status === "ok") fresh.set(check, [...(fresh.get(check) ?? []), { hash, answer }]);
        const result: CheckResult = { service: check, status: answer.status, registered: answer.registered, attributes: answer.attributes, cached: false, billed: false, checked_at: at };
        answers.set(key(row.row_no, check), { ...result, billed: isBillable(row.row_status as IdentifierStatus, result) });
      });
    }),
  );
  const updated = rows.map((row) => ({
    row_no: row.row_no,
    checks: row.checks.map((c) => (c.status === "pending" ? (answers.get(key(row.row_no, c.service)) ?? c) : c)),
  }));

  const now = ctx.now();
  for (const [check, entries] of fresh) {
    await cacheAnswers(ctx.store.pool, check, entries, now, new Date(now.getTime() + checkDef(check).cacheTtlSeconds * 1000));
  }

  const outcome = await withTransaction(ctx.store.pool, async (client) => {
    const done = await completeLookup(client, lookupId, updated, now);
    if (!done) return null;
    let eventId: string | null = null;
    if (done.announced_pending && done.webhook_endpoint_id) {
      const { rows: all } = await client.query<{ checks: CheckResult[] }>(`SELECT checks FROM result_rows WHERE lookup_id = $1`, [lookupId]);
      eventId = await recordEvent(client, {
        accountId: done.account_id,
        livemode: true,
        type: "lookup.completed",
        endpointId: done.webhook_endpoint_id,
        createdAt: now,
        data: lookupCompletedData(lookupId, true, all),
      });
    }
    const rsv = await client.query<{ id: string }>(`SELECT id FROM reservations WHERE lookup_id = $1`, [lookupId]);
    return { reservationId: rsv.rows[0]?.id ?? null, eventId };
  });
  if (!outcome) return;
  await publishCompletion(ctx.redis, ctx.prefix, lookupId);
  if (outcome.reservationId) {
    await ctx.producer.enqueue("settle.reservation", { reservationId: outcome.reservationId }, { jobId: `settle-${outcome.reservationId}` });
  }
  ctx.logger.info({ lookupId, ms: now.getTime() - started.getTime(), eventId: outcome.eventId }, "live lookup completed");
}
