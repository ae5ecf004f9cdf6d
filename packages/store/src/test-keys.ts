import type { Sql } from "./db";
import { newId } from "@svc/domain";

/** Keys issued to this address in the window (refusals do not count). */
export async function testKeysIssuedTo(sql: Sql, email: string, since: Date): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM test_key_requests WHERE email = $1 AND outcome = 'issued' AND created_at > $2`,
    [email, since],
  );
  return rows[0]?.n ?? 0;
}

export async function recordTestKeyRequest(
  sql: Sql,
  r: { email: string; name: string; company: string; useCase: string; network: string; outcome: "issued" | "refused_exists" | "refused_network"; apiKeyId: string | null; createdAt: Date },
): Promise<string> {
  const id = newId("testKeyRequest");
  await sql.query(
    `INSERT INTO test_key_requests (id, email, name, company, use_case, network, outcome, api_key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [id, r.email, r.name, r.company, r.useCase, r.network, r.outcome, r.apiKeyId, r.createdAt],
  );
  return id;
}
