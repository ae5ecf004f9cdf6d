import type pg from "pg";
import type { Sql } from "./db";

/** `carrier_blocks.source`: whose allocation data a block comes from. */
export const CARRIER_BLOCK_SOURCES = ["nanpa_co_codes", "nanpa_thousands_blocks", "bnetza", "ofcom"] as const;
export type CarrierBlockSource = (typeof CARRIER_BLOCK_SOURCES)[number];

/** One allocated block: the digits after "+" its numbers start with, and who it was allocated to. */
export type CarrierBlockRow = { prefix: string; country: string; carrier: string; effectiveOn: string | null };

/** The block a number falls in (its longest stored prefix). */
export type CarrierBlockMatch = { prefix: string; source: CarrierBlockSource; carrier: string; country: string; effectiveOn: string | null };

/** Shortest and longest prefix a lookup tries: a country code alone is never a block; E.164 has at most 15 digits. */
const MIN_PREFIX = 2;
const MAX_PREFIX = 15;

/**
 * Runs one import of a source as one transaction: the source's stored blocks are
 * deleted, `fill` writes the new ones through `write`, and the run is recorded.
 * Lookups see the old blocks until the commit and the new ones after it, never a
 * mix; a failed run changes nothing. Two imports of the same source queue on an
 * advisory lock instead of interleaving.
 */
export async function replaceCarrierBlocks<T extends { rowsRead: number; fileSha256: string }>(
  pool: pg.Pool,
  run: { id: string; source: CarrierBlockSource },
  fill: (write: (blocks: readonly CarrierBlockRow[]) => Promise<number>) => Promise<T>,
): Promise<T & { blocksStored: number; blocksReplaced: number; createdAt: Date }> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`carrier_import:${run.source}`]);
    const deleted = await client.query("DELETE FROM carrier_blocks WHERE source = $1", [run.source]);
    let stored = 0;
    const outcome = await fill(async (blocks) => {
      const added = await insertCarrierBlocks(client, run, blocks);
      stored += added;
      return added;
    });
    const { rows } = await client.query<{ created_at: Date }>(
      `INSERT INTO carrier_imports (id, source, file_sha256, rows_read, blocks_stored, blocks_replaced)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at`,
      [run.id, run.source, outcome.fileSha256, outcome.rowsRead, stored, deleted.rowCount ?? 0],
    );
    await client.query("COMMIT");
    return { ...outcome, blocksStored: stored, blocksReplaced: deleted.rowCount ?? 0, createdAt: (rows[0] as { created_at: Date }).created_at };
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** One multi-row insert; a prefix already written by this run (a repeated row) is left out. Returns how many were added. */
async function insertCarrierBlocks(sql: Sql, run: { id: string; source: CarrierBlockSource }, blocks: readonly CarrierBlockRow[]): Promise<number> {
  if (blocks.length === 0) return 0;
  const result = await sql.query(
    `INSERT INTO carrier_blocks (prefix, source, country, carrier, effective_on, import_id)
     SELECT b.prefix, $5, b.country, b.carrier, b.effective_on, $6
     FROM unnest($1::text[], $2::text[], $3::text[], $4::date[]) AS b(prefix, country, carrier, effective_on)
     ON CONFLICT (prefix, source) DO NOTHING`,
    [blocks.map((b) => b.prefix), blocks.map((b) => b.country), blocks.map((b) => b.carrier), blocks.map((b) => b.effectiveOn), run.source, run.id],
  );
  return result.rowCount ?? 0;
}

/** Every prefix of a number's digits a block could have, longest first. */
export function candidatePrefixes(digits: string): string[] {
  const out: string[] = [];
  for (let n = Math.min(digits.length, MAX_PREFIX); n >= MIN_PREFIX; n -= 1) out.push(digits.slice(0, n));
  return out;
}

/**
 * The block of each number (digits after "+"), by longest matching prefix, in one
 * indexed query for the whole batch. Numbers in no stored block are absent from
 * the map. At equal length the sources' order in CARRIER_BLOCK_SOURCES decides.
 */
export async function findCarrierBlocks(sql: Sql, numbers: readonly string[]): Promise<Map<string, CarrierBlockMatch>> {
  const found = new Map<string, CarrierBlockMatch>();
  const candidates = [...new Set(numbers.flatMap(candidatePrefixes))];
  if (candidates.length === 0) return found;
  const { rows } = await sql.query<{ prefix: string; source: CarrierBlockSource; carrier: string; country: string; effective_on: string | null }>({
    name: "carrier-blocks",
    text: `SELECT prefix, source, carrier, country, to_char(effective_on, 'YYYY-MM-DD') AS effective_on
           FROM carrier_blocks WHERE prefix = ANY($1::text[])
           ORDER BY length(prefix) DESC, array_position($2::text[], source)`,
    values: [candidates, CARRIER_BLOCK_SOURCES],
  });
  const byPrefix = new Map<string, CarrierBlockMatch>();
  for (const r of rows) {
    if (!byPrefix.has(r.prefix)) byPrefix.set(r.prefix, { prefix: r.prefix, source: r.source, carrier: r.carrier, country: r.country, effectiveOn: r.effective_on });
  }
  for (const digits of numbers) {
    const match = candidatePrefixes(digits).map((p) => byPrefix.get(p)).find((m) => m !== undefined);
    if (match) found.set(digits, match);
  }
  return found;
}
