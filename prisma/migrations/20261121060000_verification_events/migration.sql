-- A URL change looks up the endpoint's latest challenge (webhook_endpoints.url_changed_at
-- must pass it). Partial: only verification events, a small share of all events, so the
-- hot event inserts are not slowed. Prisma's schema cannot express a partial index; it
-- lives here only.
CREATE INDEX "events_verification_endpoint_idx" ON "events"("endpoint_id", "created_at") WHERE "type" = 'webhook.verification';

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121060000_verification_events' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
