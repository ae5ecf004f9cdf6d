-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "results_url" TEXT;


-- Hand-written: result pages and downloads walk a job's rows in order.
CREATE INDEX IF NOT EXISTS "job_chunks_job_status_idx" ON "job_chunks" ("job_id", "status");
