-- The jobs of one month are the time-ordered ids between two prefixes compared byte by
-- byte (COLLATE "C"; docs/partitioning.md): the partition upkeep and the retention sweep
-- ask for them on every sweep (monthExpired, rowDeleteCutoffs). The primary key's index
-- sorts by the database's collation and cannot answer such a range, so each of those
-- questions read the whole jobs table; this index answers it by range.
-- Built without CONCURRENTLY: jobs holds one row per job, and writes to it wait only
-- for the build (tens of milliseconds per 100,000 jobs).
CREATE INDEX "jobs_id_bytewise_idx" ON "jobs" ("id" COLLATE "C");

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261127120000_jobs_id_bytewise' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
