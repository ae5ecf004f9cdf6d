-- Spam scoring reads a batch of numbers and only their reports inside the recency
-- horizon (three years): (e164, reported_on) bounds that scan in the index, so reports
-- too old to count are never fetched. It replaces the (e164) index, its prefix.
-- The new index is built before the old one goes, so lookups never lack one.

-- CreateIndex
CREATE INDEX "spam_reports_e164_reported_on_idx" ON "spam_reports"("e164", "reported_on");

-- DropIndex
DROP INDEX "spam_reports_e164_idx";

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261125130000_spam_recency' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
