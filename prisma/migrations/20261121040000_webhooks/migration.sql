-- Webhook delivery: retention purges events by age; an endpoint's deliveries are
-- held, released and cancelled together.
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

CREATE INDEX "webhook_deliveries_endpoint_id_status_idx" ON "webhook_deliveries"("endpoint_id", "status");

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121040000_webhooks' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
