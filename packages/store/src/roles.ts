import { createHash, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import type pg from "pg";

/**
 * Least privilege in Postgres: what each service's login role may do, and the
 * statement that makes it so (applyServiceRoles, run by `scripts/db-deploy.mjs`
 * after every migration, as the role that owns the schema).
 *
 * One place lists every table a service touches and how; anything not listed is
 * refused by Postgres. The lists follow the code paths of each service (a new
 * query on a table or column not here fails in the fleet tests, which run every
 * service as its own role). The line that matters most: only the check-worker and
 * the billing-ledger write money (settlements, ledger entries, balances); the
 * internet-facing gateway reserves (reserved_micros, reservations) and may read
 * and cancel, but never settle, post to the ledger or change a balance.
 *
 * docs/security.md describes the same table for people.
 */
export const SERVICES = ["gateway", "check-worker", "billing-ledger", "webhook-dispatcher"] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Each service's login role unless a deployment names it otherwise (the user of its DATABASE_URL). */
export const DEFAULT_SERVICE_ROLES: Record<ServiceName, string> = {
  gateway: "svc_gateway",
  "check-worker": "svc_check_worker",
  "billing-ledger": "svc_billing_ledger",
  "webhook-dispatcher": "svc_webhook_dispatcher",
};

/**
 * Month partitions: the check-worker makes the coming months' through
 * svc_create_month_partitions, a SECURITY DEFINER function of the schema owner (it may
 * call that one function, and own nothing); detaching and dropping past months needs
 * the tables' owner and a session of its own (DETACH ... CONCURRENTLY), so the schema
 * owner's partition upkeep does it (scripts/partition-upkeep.mjs). A role that owned
 * the partitioned tables could put triggers or policies on them that run as whoever
 * touches them next: no service's role is given that.
 */
export const PARTITION_FUNCTIONS = ["svc_create_month_partitions(date)"] as const;

type Columns = readonly string[];
/** `true`: the whole table; a list: those columns only. */
type TableGrant = { select?: true | Columns; insert?: true | Columns; update?: true | Columns; delete?: true };
type ServiceGrants = { tables: Record<string, TableGrant>; sequences: readonly string[]; functions?: readonly string[] };

/** Whatever runs `SELECT ... FOR UPDATE` needs UPDATE on a column: this one, when it updates nothing else. */
const LOCK_ONLY = ["created_at"] as const;

const MONEY_WRITER = {
  reservations: { select: true, update: ["charged_micros", "released_micros", "status", "closed_at"] },
  settlements: { select: true, insert: true },
  ledger_transactions: { select: true, insert: true },
  ledger_entries: { select: true, insert: true },
  accounts: { select: true, update: ["balance_micros", "reserved_micros", "day_spend_micros", "low_balance_notified_at"] },
  api_keys: { select: true, update: ["day_spend_micros"] },
  daily_usage: { select: true, insert: true, update: ["checks", "conclusive", "cached", "billed_units", "cost_micros"] },
} satisfies Record<string, TableGrant>;

export const SERVICE_GRANTS: Record<ServiceName, ServiceGrants> = {
  gateway: {
    tables: {
      _prisma_migrations: { select: true },
      // Sign-up of test keys and the public sandbox: never a balance (ledger top-ups are the admin CLI's).
      accounts: {
        select: true,
        insert: ["id", "name", "retention_days", "is_sandbox"],
        update: ["reserved_micros", "counter_day", "day_identifiers", "day_spend_micros", "identifiers_cap_notified_on", "spend_cap_notified_on"],
      },
      api_keys: { select: true, insert: true, update: ["key_hash", "scopes", "revoked_at", "counter_day", "day_spend_micros", "spend_cap_notified_on", "last_used_at"] },
      check_prices: { select: true },
      account_check_settings: { select: true },
      lookups: { select: true, insert: true, update: ["announced_pending", "status", "completed_at", "checks_done", "leased_until"] },
      result_rows: { select: true, insert: true, update: ["checks", "pending_checks"], delete: true },
      jobs: { select: true, insert: true, update: ["done", "non_billable", "status", "cancelled_at", "finished_at", "purged_at"] },
      job_chunks: { select: true, insert: true, update: ["status", "updated_at"] },
      reservations: { select: true, insert: true },
      daily_usage: { select: true, insert: true, update: ["identifiers", "checks", "conclusive"] },
      check_cache: { select: true },
      idempotency_records: { select: true, insert: true, update: true, delete: true },
      webhook_endpoints: { select: true, insert: true, update: ["events", "url", "status", "verified_at", "url_changed_at", "next_verification_at", "deleted_at"] },
      events: { select: true, insert: true },
      webhook_deliveries: { select: true, update: ["status", "next_attempt_at", "updated_at"] },
      test_key_requests: { select: true, insert: true },
    },
    sequences: ["result_rows_id_seq"],
  },
  "check-worker": {
    tables: {
      ...MONEY_WRITER,
      _prisma_migrations: { select: true },
      lookups: { select: true, update: ["attempts", "leased_until", "status", "completed_at", "checks_done"], delete: true },
      result_rows: { select: true, update: ["checks", "pending_checks"], delete: true },
      jobs: {
        select: true,
        update: ["done", "conclusive", "non_billable", "status", "started_at", "finished_at", "last_progress_at", "cancelled_at", "failure_code", "failure_message"],
        delete: true,
      },
      job_chunks: { select: true, update: ["status", "attempts", "leased_until", "updated_at"] },
      // Retention deletes the expired usage rows.
      daily_usage: { ...MONEY_WRITER.daily_usage, delete: true },
      check_cache: { select: true, insert: true, update: ["status", "registered", "attributes", "checked_at", "expires_at"], delete: true },
      spam_reports: { select: true },
      carrier_blocks: { select: true },
      events: { select: true, insert: true, update: LOCK_ONLY, delete: true },
      webhook_deliveries: { select: true, delete: true },
      idempotency_records: { select: true, update: LOCK_ONLY, delete: true },
      test_key_requests: { select: true, update: LOCK_ONLY, delete: true },
    },
    sequences: ["ledger_entries_id_seq"],
    functions: PARTITION_FUNCTIONS,
  },
  "billing-ledger": {
    tables: {
      ...MONEY_WRITER,
      _prisma_migrations: { select: true },
      lookups: { select: true },
      jobs: { select: true },
      job_chunks: { select: true },
      result_rows: { select: true },
      events: { insert: true },
    },
    sequences: ["ledger_entries_id_seq"],
  },
  "webhook-dispatcher": {
    tables: {
      _prisma_migrations: { select: true },
      events: { select: true, insert: true, update: ["dispatched_at"] },
      webhook_endpoints: { select: true, update: ["status", "verified_at", "next_verification_at"] },
      webhook_deliveries: { select: true, insert: true, update: ["leased_until", "updated_at", "attempts", "status", "next_attempt_at"] },
      delivery_attempts: { insert: true },
    },
    sequences: ["webhook_deliveries_id_seq", "delivery_attempts_id_seq"],
  },
};

/** A service's login: the role name and, when the deployment authenticates with one, its password. */
export type ServiceLogin = { role: string; password?: string };

const ident = (client: pg.ClientBase, name: string) => client.escapeIdentifier(name);
const literal = (client: pg.ClientBase, text: string) => client.escapeLiteral(text);

/** The GRANT statements for one service's role (after its earlier grants were revoked). */
export function grantStatements(client: pg.ClientBase, service: ServiceName, role: string): string[] {
  const who = ident(client, role);
  const statements: string[] = [];
  const what = (privilege: string, spec: true | Columns) => (spec === true ? privilege : `${privilege} (${spec.map((c) => ident(client, c)).join(", ")})`);
  for (const [table, grant] of Object.entries(SERVICE_GRANTS[service].tables)) {
    const privileges: string[] = [];
    if (grant.select) privileges.push(what("SELECT", grant.select));
    if (grant.insert) privileges.push(what("INSERT", grant.insert));
    if (grant.update) privileges.push(what("UPDATE", grant.update));
    if (grant.delete) privileges.push("DELETE");
    statements.push(`GRANT ${privileges.join(", ")} ON TABLE ${ident(client, table)} TO ${who}`);
  }
  for (const sequence of SERVICE_GRANTS[service].sequences) statements.push(`GRANT USAGE ON SEQUENCE ${ident(client, sequence)} TO ${who}`);
  // Names with their argument types, written here: never from outside.
  for (const fn of SERVICE_GRANTS[service].functions ?? []) statements.push(`GRANT EXECUTE ON FUNCTION ${fn} TO ${who}`);
  return statements;
}

/**
 * Creates (or updates the password of) each service's login role and gives it
 * exactly SERVICE_GRANTS in this database: everything it held on the schema's
 * tables, sequences and functions is revoked first, so a grant removed from the list
 * is removed from the database too, and a role that existed with more (SUPERUSER,
 * CREATEROLE, BYPASSRLS, ...) loses it. Runs as the schema owner, which needs
 * CREATEROLE (or is a superuser); in one transaction, and idempotent: run after
 * every migration.
 */
export async function applyServiceRoles(client: pg.ClientBase, logins: Record<ServiceName, ServiceLogin>): Promise<void> {
  // Roles belong to the whole server, and Postgres' locks that serialise changes to
  // them are per database: two databases' runs at once (deployments, test runs) can
  // collide on one role. The loser's transaction is rolled back and tried again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await applyOnce(client, logins);
    } catch (err) {
      const code = (err as { code?: string }).code;
      const collided = code === "23505" || code === "42710" || code === "40001" || code === "40P01" || /concurrently updated/.test(String(err));
      if (!collided || attempt >= 8) throw err;
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 200 * attempt));
    }
  }
}

async function applyOnce(client: pg.ClientBase, logins: Record<ServiceName, ServiceLogin>): Promise<void> {
  const roles = new Set(Object.values(logins).map((l) => l.role));
  if (roles.size !== SERVICES.length) throw new Error("each service needs a database role of its own");
  const { rows: me } = await client.query<{ name: string; superuser: boolean }>(`SELECT current_user AS name, rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`);
  const owner = me[0];
  if (!owner) throw new Error("cannot see the current role");
  if (roles.has(owner.name)) throw new Error(`the schema owner (${owner.name}) cannot also be a service's role`);

  await client.query("BEGIN");
  try {
    // One run at a time in this database (several replicas of a migration Job, say).
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('svc_apply_service_roles'))`);
    // Nobody but the owner creates objects in the schema (a database upgraded from before PostgreSQL 15 still lets everyone).
    await client.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);

    const database = (await client.query<{ db: string }>(`SELECT current_database() AS db`)).rows[0]?.db as string;
    for (const service of SERVICES) {
      const { role, password } = logins[service];
      // A login and nothing more, whatever the role was before; the password as a SCRAM
      // verifier, so the statement (which a failure may log) never holds it in clear.
      await ensureRole(client, role, `LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS${password === undefined ? "" : ` PASSWORD ${literal(client, scramVerifier(password))}`}`);
      const who = ident(client, role);
      await client.query(`GRANT CONNECT ON DATABASE ${ident(client, database)} TO ${who}`);
      await client.query(`GRANT USAGE ON SCHEMA public TO ${who}`);
      await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA public FROM ${who}`);
      await client.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM ${who}`);
      await client.query(`REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM ${who}`);
      // Column grants are not covered by REVOKE ... ON ALL TABLES: revoke each one held.
      const { rows: columns } = await client.query<{ table_name: string; column_name: string; privilege_type: string }>(
        `SELECT table_name, column_name, privilege_type FROM information_schema.column_privileges
         WHERE grantee = $1 AND table_schema = 'public'`,
        [role],
      );
      for (const c of columns) await client.query(`REVOKE ${c.privilege_type} (${ident(client, c.column_name)}) ON TABLE ${ident(client, c.table_name)} FROM ${who}`);
      for (const statement of grantStatements(client, service, role)) await client.query(statement);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

async function ensureRole(client: pg.ClientBase, role: string, options: string): Promise<void> {
  const { rowCount } = await client.query(`SELECT 1 FROM pg_roles WHERE rolname = $1`, [role]);
  await client.query(`${rowCount ? "ALTER" : "CREATE"} ROLE ${ident(client, role)} WITH ${options}`);
}

/**
 * PostgreSQL's SCRAM-SHA-256 verifier of `password` (RFC 5802/7677, as libpq's
 * PQencryptPasswordConn makes it): what `PASSWORD '...'` may carry instead of the
 * password. Printable ASCII only (SASLprep leaves it unchanged, so the server's
 * verification of it matches).
 */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  if (!/^[\x21-\x7e]+$/.test(password)) throw new Error("a service's database password must be printable ASCII without spaces");
  const salted = pbkdf2Sync(password, salt, iterations, 32, "sha256");
  const clientKey = createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = createHash("sha256").update(clientKey).digest();
  const serverKey = createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}
