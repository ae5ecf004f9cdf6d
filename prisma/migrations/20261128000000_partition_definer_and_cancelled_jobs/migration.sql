-- Least privilege (issue 20, docs/security.md). The check-worker keeps the coming months'
-- partitions made without owning any table: it calls this one function, which runs as
-- its owner (the schema owner who ran this migration) with a fixed search_path (public,
-- where only the owner may create; pg_catalog is searched first regardless), and
-- nobody else may call it. Dropping past months (which needs the owner, and a session
-- of its own for DETACH ... CONCURRENTLY) is the owner's partition upkeep
-- (scripts/partition-upkeep.mjs).
ALTER FUNCTION "svc_create_month_partitions"(DATE) SECURITY DEFINER SET search_path = public;
REVOKE EXECUTE ON FUNCTION "svc_create_month_partitions"(DATE) FROM PUBLIC;

-- A DELETE of a job with nothing in flight leaves it cancelled and unfinished for the
-- check-worker to finish and settle (job.finish); its sweep looks for those whose
-- message was lost every few seconds: only they are in this index.
CREATE INDEX "jobs_cancelled_unfinished_idx" ON "jobs" ("cancelled_at") WHERE "status" = 'cancelled' AND "finished_at" IS NULL;

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261128000000_partition_definer_and_cancelled_jobs' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
