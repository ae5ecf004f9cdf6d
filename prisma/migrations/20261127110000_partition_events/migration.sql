-- events and delivery_attempts partitioned by month (issue 15; docs/partitioning.md),
-- as lookups and result_rows are (20261127100000_partition_by_month): the key is
-- `id_month`, the UTC month the event's time-ordered id was made in; an event's
-- deliveries and their attempts carry their event's month. Existing rows stay where
-- they are: the tables are renamed to <table>_legacy and attached as the partition
-- for ids without a time (id_month 1970-01-01), proven by one sequential scan each.
--
-- webhook_deliveries is not partitioned (the dispatcher finds a delivery by its
-- bigint id, which names no month); it gets id_month, its event's month, so its
-- attempts can be filed with it and a month's deliveries found when the month goes.
--
-- Foreign keys: webhook_deliveries.event_id -> events(id) is dropped (a key to a
-- partitioned table must name its partition key); the statement trigger
-- events_delete_deliveries deletes the deliveries of every event deleted, as the
-- cascade did, and a delivery is inserted only by planEvent, in the statement that
-- reads its event. delivery_attempts.delivery_id -> webhook_deliveries(id) stays (a
-- partitioned table may reference a plain one). delivery_attempts keeps its unique
-- (delivery_id, attempt_no) per partition: a delivery's attempts share one month.

-- 1. The legacy partitions.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_fkey";
ALTER TABLE "webhook_deliveries" ADD COLUMN "id_month" DATE NOT NULL DEFAULT DATE '1970-01-01';

ALTER TABLE "events" RENAME TO "events_legacy";
ALTER INDEX "events_pkey" RENAME TO "events_legacy_pkey";
ALTER INDEX "events_dispatched_at_created_at_idx" RENAME TO "events_legacy_dispatched_at_created_at_idx";
ALTER INDEX "events_account_id_created_at_idx" RENAME TO "events_legacy_account_id_created_at_idx";
ALTER INDEX "events_created_at_idx" RENAME TO "events_legacy_created_at_idx";
ALTER INDEX "events_verification_endpoint_idx" RENAME TO "events_legacy_verification_endpoint_idx";
ALTER TABLE "events_legacy" ADD COLUMN "id_month" DATE NOT NULL DEFAULT DATE '1970-01-01';

ALTER TABLE "delivery_attempts" RENAME TO "delivery_attempts_legacy";
ALTER INDEX "delivery_attempts_pkey" RENAME TO "delivery_attempts_legacy_pkey";
ALTER INDEX "delivery_attempts_delivery_id_attempt_no_key" RENAME TO "delivery_attempts_legacy_delivery_id_attempt_no_key";
ALTER TABLE "delivery_attempts_legacy" ADD COLUMN "id_month" DATE NOT NULL DEFAULT DATE '1970-01-01';

-- 2. The partitioned parents (id_month defaults to the legacy month for the previous
--    release's writers, whose event ids are random).
CREATE TABLE "events" (LIKE "events_legacy" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("id_month");
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "events_dispatched_at_created_at_idx" ON ONLY "events"("dispatched_at", "created_at");
CREATE INDEX "events_account_id_created_at_idx" ON ONLY "events"("account_id", "created_at");
CREATE INDEX "events_created_at_idx" ON ONLY "events"("created_at");
CREATE INDEX "events_verification_endpoint_idx" ON ONLY "events"("endpoint_id", "created_at") WHERE "type" = 'webhook.verification';

CREATE TABLE "delivery_attempts" (LIKE "delivery_attempts_legacy" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE ("id_month");
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_fkey" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER SEQUENCE "delivery_attempts_id_seq" OWNED BY "delivery_attempts"."id";

-- 3. Attach (one scan each) and attach the legacy indexes to the parent's.
ALTER TABLE "events" ATTACH PARTITION "events_legacy" FOR VALUES FROM (MINVALUE) TO ('2000-01-01');
ALTER INDEX "events_dispatched_at_created_at_idx" ATTACH PARTITION "events_legacy_dispatched_at_created_at_idx";
ALTER INDEX "events_account_id_created_at_idx" ATTACH PARTITION "events_legacy_account_id_created_at_idx";
ALTER INDEX "events_created_at_idx" ATTACH PARTITION "events_legacy_created_at_idx";
ALTER INDEX "events_verification_endpoint_idx" ATTACH PARTITION "events_legacy_verification_endpoint_idx";
ALTER TABLE "delivery_attempts" ATTACH PARTITION "delivery_attempts_legacy" FOR VALUES FROM (MINVALUE) TO ('2000-01-01');

-- 4. Month partitions of all four tables, made ahead as before (the function now
--    covers events and delivery_attempts too; same rules: empty, then attached).
CREATE OR REPLACE FUNCTION "svc_create_month_partitions"("month" DATE) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  upper_bound DATE := ("month" + INTERVAL '1 month')::DATE;
  suffix TEXT := to_char("month", '"p"YYYY_MM');
  made INTEGER := 0;
  t TEXT;
  part TEXT;
BEGIN
  IF "month" IS NULL OR "month" <> date_trunc('month', "month")::DATE OR "month" < DATE '2000-01-01' THEN
    RAISE EXCEPTION 'svc_create_month_partitions: % is not the first day of a month from 2000 on', "month";
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('svc_create_month_partitions'));
  FOREACH t IN ARRAY ARRAY['lookups', 'result_rows', 'events', 'delivery_attempts'] LOOP
    part := t || '_' || suffix;
    IF to_regclass(format('%I', part)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, t);
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY ("id")', part, part || '_pkey');
      IF t = 'result_rows' THEN
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I ("job_id", "row_no") WHERE "job_id" IS NOT NULL', part || '_job_id_row_no_key', part);
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I ("lookup_id", "row_no") WHERE "lookup_id" IS NOT NULL', part || '_lookup_id_row_no_key', part);
      ELSIF t = 'delivery_attempts' THEN
        EXECUTE format('CREATE UNIQUE INDEX %I ON %I ("delivery_id", "attempt_no")', part || '_delivery_id_attempt_no_key', part);
      END IF;
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part, "month", upper_bound);
      made := made + 1;
    END IF;
  END LOOP;
  RETURN made;
END;
$$;

SELECT "svc_create_month_partitions"((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => n))::DATE)
FROM generate_series(0, 2) AS n;

-- 5. Deleting events deletes their deliveries (and so, by the remaining key, their attempts).
CREATE FUNCTION "svc_delete_deliveries_of_deleted_events"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "webhook_deliveries" w USING "deleted_events" d WHERE w."event_id" = d."id";
  RETURN NULL;
END;
$$;

CREATE TRIGGER "events_delete_deliveries" AFTER DELETE ON "events"
  REFERENCING OLD TABLE AS "deleted_events"
  FOR EACH STATEMENT EXECUTE FUNCTION "svc_delete_deliveries_of_deleted_events"();

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261127110000_partition_events' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
