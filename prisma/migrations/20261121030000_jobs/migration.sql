-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "results_url" TEXT;


-- Hand-written: result pages and downloads walk a job's rows in order.
CREATE INDEX IF NOT EXISTS "job_chunks_job_status_idx" ON "job_chunks" ("job_id", "status");

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121030000_jobs' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
