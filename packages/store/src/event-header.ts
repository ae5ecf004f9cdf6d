import { idMonth } from "@svc/domain";
import type { Sql } from "./db";

/** An event without its data: whose it is, what it is, and whether it has been dispatched. */
export type EventHeader = { id: string; account_id: string; livemode: boolean; type: string; created_at: Date; dispatched_at: Date | null };

/** One event by id (its partition found from the id), or null. `id` must be an event id. */
export async function getEventHeader(sql: Sql, id: string): Promise<EventHeader | null> {
  const { rows } = await sql.query<EventHeader>(`SELECT id, account_id, livemode, type, created_at, dispatched_at FROM events WHERE id = $1 AND id_month = $2`, [id, idMonth(id)]);
  return rows[0] ?? null;
}
