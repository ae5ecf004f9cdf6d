-- A 50,000-row job's rows are one COPY into result_rows in the transaction that
-- stores the job (issue 14: the job's time is bound by that COPY). Each row paid a
-- foreign-key check on jobs (~25 % of the COPY) and an entry in two full unique
-- indexes, one of them (lookup_id, row_no) with a NULL key for every job row (and
-- the other one for every lookup row). Measured on one rendered 50,000-row job in a
-- rolled-back transaction (median of 7): as before ~720 ms; without the job foreign
-- key and with both indexes partial ~500 ms.
--
-- 1. result_rows.job_id keeps no foreign key. What it guaranteed is kept this way:
--    - deleting a job deletes its rows, whoever deletes it (retention, a purge, an
--      account or API key deleted with its jobs): the statement trigger below, one
--      DELETE per statement that deletes jobs (as the cascade did, minus the per-row
--      check on insert);
--    - a job's rows are written only by insertJob (packages/store/src/jobs.ts), by the
--      COPY that follows the job's own INSERT in the same transaction, so they cannot
--      name a job that does not exist; later writes only UPDATE a row's checks. The
--      database no longer refuses a row naming a missing job: that is the check each
--      row paid for.
--    Job ids never change (the foreign key's ON UPDATE CASCADE had nothing to do).
--    The lookup_id foreign key stays: a lookup stores one row or a few, in one statement.
ALTER TABLE "result_rows" DROP CONSTRAINT "result_rows_job_id_fkey";

CREATE FUNCTION "svc_delete_rows_of_deleted_jobs"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "result_rows" WHERE "job_id" = ANY (ARRAY(SELECT "id" FROM "deleted_jobs"));
  RETURN NULL;
END;
$$;

CREATE TRIGGER "jobs_delete_result_rows" AFTER DELETE ON "jobs"
  REFERENCING OLD TABLE AS "deleted_jobs"
  FOR EACH STATEMENT EXECUTE FUNCTION "svc_delete_rows_of_deleted_jobs"();

-- 2. Each unique index holds only the rows of its kind (a row has exactly one parent:
--    result_rows_one_parent). Every query that uses them names the parent with `=`,
--    which implies IS NOT NULL, so the planner uses them as before. The new ones are
--    built before the old ones go, so no moment lacks the uniqueness; existing rows
--    already satisfy it.
CREATE UNIQUE INDEX "result_rows_job_rows_key" ON "result_rows"("job_id", "row_no") WHERE "job_id" IS NOT NULL;
CREATE UNIQUE INDEX "result_rows_lookup_rows_key" ON "result_rows"("lookup_id", "row_no") WHERE "lookup_id" IS NOT NULL;
DROP INDEX "result_rows_job_id_row_no_key";
DROP INDEX "result_rows_lookup_id_row_no_key";
ALTER INDEX "result_rows_job_rows_key" RENAME TO "result_rows_job_id_row_no_key";
ALTER INDEX "result_rows_lookup_rows_key" RENAME TO "result_rows_lookup_id_row_no_key";

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261126100000_result_rows_job_fill' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
