import type { Sql } from "./db";
import { idMonth, newId } from "@svc/domain";

export type NewEvent = {
  accountId: string;
  livemode: boolean;
  type: string;
  data: Record<string, unknown>;
  endpointId: string | null;
  createdAt: Date;
};

/**
 * Records an event for the webhook-dispatcher, in the caller's transaction so the
 * event exists if and only if the change it reports was committed.
 */
export async function recordEvent(sql: Sql, e: NewEvent): Promise<string> {
  // Made at the event's own time: its partition month is the month it was created in.
  const id = newId("event", 22, e.createdAt);
  await sql.query(
    `INSERT INTO events (id, account_id, livemode, type, data, endpoint_id, created_at, id_month) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, e.accountId, e.livemode, e.type, JSON.stringify(e.data), e.endpointId, e.createdAt, idMonth(id)],
  );
  return id;
}

export async function listEvents(sql: Sql, accountId: string, type?: string): Promise<Array<{ id: string; type: string; data: Record<string, unknown>; endpoint_id: string | null; livemode: boolean; created_at: Date }>> {
  const { rows } = await sql.query(
    `SELECT id, type, data, endpoint_id, livemode, created_at FROM events WHERE account_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY created_at, id`,
    [accountId, type ?? null],
  );
  return rows;
}
