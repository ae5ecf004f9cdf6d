-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "counter_day" DATE,
ADD COLUMN     "day_identifiers" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "day_spend_micros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "identifiers_cap_notified_on" DATE,
ADD COLUMN     "spend_cap_notified_on" DATE;

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "counter_day" DATE,
ADD COLUMN     "day_spend_micros" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "spend_cap_notified_on" DATE;

-- AlterTable
ALTER TABLE "reservations" ADD COLUMN     "day" DATE NOT NULL,
ADD COLUMN     "unit_prices" JSONB NOT NULL;


-- Hand-written: the api_keys cache trigger fires only for columns a cached key
-- record carries, not for the daily spend counters updated on every request.
DROP TRIGGER "api_keys_notify_cache" ON "api_keys";
CREATE TRIGGER "api_keys_notify_cache" AFTER UPDATE OF "key_hash", "mode", "is_sandbox", "scopes", "allow_ips", "daily_spend_cap_micros", "expires_at", "revoked_at", "account_id" OR DELETE ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();

ALTER TABLE "accounts" ADD CONSTRAINT "accounts_day_counters_non_negative" CHECK ("day_identifiers" >= 0 AND "day_spend_micros" >= 0);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_day_spend_non_negative" CHECK ("day_spend_micros" >= 0);

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121020000_billing' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
