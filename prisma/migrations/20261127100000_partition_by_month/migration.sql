-- lookups and result_rows partitioned by month (issue 15; docs/partitioning.md).
--
-- Partition key: `id_month` (date, the first day of a UTC month), the month the
-- lookup's or job's id was made in. Lookup and job ids are time-ordered from this
-- release on (packages/domain/src/ids.ts: 8 base62 characters of milliseconds, then
-- 18 random ones), so the id alone names the partition: every store query that has an
-- id computes its month (idMonth) and passes `id_month = $n`, and Postgres prunes to
-- one partition. A job's rows take the job's month, a lookup's rows the lookup's.
-- Ids made before this release (22 random characters) all map to 1970-01-01: the
-- legacy partition, which is the existing table itself.
--
-- What this migration does to existing data: nothing is copied or rewritten. Each
-- table is renamed to <table>_legacy, gets the column id_month = '1970-01-01' (a
-- constant default: no rewrite), and is attached as the partition for
-- [MINVALUE, 2000-01-01) of a new partitioned table under the old name. ATTACH
-- checks the partition bound with one sequential scan of each table (no index is
-- built: the legacy table keeps its own indexes; the parent's indexes are ones the
-- legacy table already has, so they are attached, not built). The whole script is one
-- transaction holding ACCESS EXCLUSIVE locks on lookups, result_rows and jobs while
-- those scans run (k8s/README.md, upgrade notes). Legacy rows leave with the
-- row-by-row retention sweep; the legacy partitions are dropped once empty.
--
-- Uniqueness: a unique index on a partitioned table must contain the partition key.
-- The keys here do not need it: all rows of one lookup or job share one id_month, so
-- each partition's own unique indexes (id; job_id, row_no; lookup_id, row_no), made
-- by svc_create_month_partitions, keep them unique across the table. Prisma cannot
-- express any of this (prisma/schema.prisma says so where it matters).
--
-- Foreign key result_rows.lookup_id -> lookups(id): dropped. A key referencing a
-- partitioned table must include its partition key (lookup_id, id_month), it would
-- make every partition drop a DETACH that re-checks the referencing rows, and each
-- lookup row paid its check. Kept as the job rows' rule (20261126100000): a lookup's
-- rows are written only in the statement that inserts the lookup
-- (packages/store/src/lookups.ts, lookupInsertCtes, and lookup-batch.ts), and a
-- statement trigger deletes the rows of every lookup deleted, as ON DELETE CASCADE did.

-- 1. The old tables become the legacy partitions. Their indexes and constraints get
--    names of their own, so the parents can use the names Prisma knows.
ALTER TABLE "result_rows" DROP CONSTRAINT "result_rows_lookup_id_fkey";

ALTER TABLE "lookups" RENAME TO "lookups_legacy";
ALTER INDEX "lookups_pkey" RENAME TO "lookups_legacy_pkey";
ALTER INDEX "lookups_account_id_created_at_idx" RENAME TO "lookups_legacy_account_id_created_at_idx";
ALTER INDEX "lookups_status_completes_at_idx" RENAME TO "lookups_legacy_status_completes_at_idx";
ALTER INDEX "lookups_expires_at_idx" RENAME TO "lookups_legacy_expires_at_idx";
ALTER TABLE "lookups_legacy" ADD COLUMN "id_month" DATE NOT NULL DEFAULT DATE '1970-01-01';

ALTER TABLE "result_rows" RENAME TO "result_rows_legacy";
ALTER INDEX "result_rows_pkey" RENAME TO "result_rows_legacy_pkey";
ALTER INDEX "result_rows_job_id_row_no_key" RENAME TO "result_rows_legacy_job_id_row_no_key";
ALTER INDEX "result_rows_lookup_id_row_no_key" RENAME TO "result_rows_legacy_lookup_id_row_no_key";
ALTER TABLE "result_rows_legacy" ADD COLUMN "id_month" DATE NOT NULL DEFAULT DATE '1970-01-01';

-- 2. The partitioned parents: the same columns. id_month defaults to the legacy month
--    so the previous release, still running while this one rolls out, keeps writing:
--    its ids are random, and idMonth files random ids under the legacy month too.
--    Today's store always writes id_month itself.
CREATE TABLE "lookups" (LIKE "lookups_legacy" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("id_month");
ALTER TABLE "lookups" ADD CONSTRAINT "lookups_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "lookups" ADD CONSTRAINT "lookups_api_key_id_fkey" FOREIGN KEY ("api_key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "lookups_account_id_created_at_idx" ON ONLY "lookups"("account_id", "created_at");
CREATE INDEX "lookups_status_completes_at_idx" ON ONLY "lookups"("status", "completes_at");
CREATE INDEX "lookups_expires_at_idx" ON ONLY "lookups"("expires_at");

CREATE TABLE "result_rows" (LIKE "result_rows_legacy" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("id_month");
-- The id sequence belongs to the parent now (dropping the legacy partition must not drop it).
ALTER SEQUENCE "result_rows_id_seq" OWNED BY "result_rows"."id";

-- 3. Attach the legacy tables (one scan each to prove the bound), and their indexes
--    to the parent's (same definitions: attached, not built).
ALTER TABLE "lookups" ATTACH PARTITION "lookups_legacy" FOR VALUES FROM (MINVALUE) TO ('2000-01-01');
ALTER INDEX "lookups_account_id_created_at_idx" ATTACH PARTITION "lookups_legacy_account_id_created_at_idx";
ALTER INDEX "lookups_status_completes_at_idx" ATTACH PARTITION "lookups_legacy_status_completes_at_idx";
ALTER INDEX "lookups_expires_at_idx" ATTACH PARTITION "lookups_legacy_expires_at_idx";
ALTER TABLE "result_rows" ATTACH PARTITION "result_rows_legacy" FOR VALUES FROM (MINVALUE) TO ('2000-01-01');

-- 4. A month's partitions of both tables, made ahead by the check-worker
--    (packages/store/src/partitions.ts, ensureMonthPartitions) and here for this
--    month and the next two. Each is made empty and then attached, which locks the
--    parent only in SHARE UPDATE EXCLUSIVE mode (reads and writes go on; CREATE TABLE
--    ... PARTITION OF would take ACCESS EXCLUSIVE). Idempotent; concurrent callers
--    queue on an advisory lock. Returns how many tables it made (0 when both existed).
CREATE FUNCTION "svc_create_month_partitions"("month" DATE) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  upper_bound DATE := ("month" + INTERVAL '1 month')::DATE;
  suffix TEXT := to_char("month", '"p"YYYY_MM');
  made INTEGER := 0;
  t TEXT;
BEGIN
  IF "month" IS NULL OR "month" <> date_trunc('month', "month")::DATE OR "month" < DATE '2000-01-01' THEN
    RAISE EXCEPTION 'svc_create_month_partitions: % is not the first day of a month from 2000 on', "month";
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('svc_create_month_partitions'));
  FOREACH t IN ARRAY ARRAY['lookups', 'result_rows'] LOOP
    IF to_regclass(format('%I', t || '_' || suffix)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', t || '_' || suffix, t);
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("id")', t || '_' || suffix, t || '_' || suffix || '_pkey');
      IF t = 'result_rows' THEN
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I ("job_id", "row_no") WHERE "job_id" IS NOT NULL',
                       t || '_' || suffix || '_job_id_row_no_key', t || '_' || suffix);
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I ("lookup_id", "row_no") WHERE "lookup_id" IS NOT NULL',
                       t || '_' || suffix || '_lookup_id_row_no_key', t || '_' || suffix);
      END IF;
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, t || '_' || suffix, "month", upper_bound);
      made := made + 1;
    END IF;
  END LOOP;
  RETURN made;
END;
$$;

SELECT "svc_create_month_partitions"((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => n))::DATE)
FROM generate_series(0, 2) AS n;

-- 5. Deleting lookups deletes their rows (the foreign key's cascade, now a statement
--    trigger like the jobs' one; the jobs' trigger, unchanged, now looks for a deleted
--    job's rows in each partition's (job_id, row_no) index).
CREATE FUNCTION "svc_delete_rows_of_deleted_lookups"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "result_rows" r USING "deleted_lookups" d WHERE r."lookup_id" = d."id" AND r."id_month" = d."id_month";
  RETURN NULL;
END;
$$;

CREATE TRIGGER "lookups_delete_result_rows" AFTER DELETE ON "lookups"
  REFERENCING OLD TABLE AS "deleted_lookups"
  FOR EACH STATEMENT EXECUTE FUNCTION "svc_delete_rows_of_deleted_lookups"();

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261127100000_partition_by_month' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
