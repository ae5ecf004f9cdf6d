-- Gateways keep, besides their key cache, a set of every live key's hash so that a
-- forged key is refused without a database query (services/gateway/src/cache).
-- That set must hear of a key the moment it is created, on every gateway process,
-- or a brand-new key would be refused there until the next reload: announce inserts
-- on `svc_cache` too, with the same payload as updates and deletes
-- (`key:<hash hex>`, delivered on commit). The update trigger keeps its column list
-- (migration billing): spend counters moved by reservations are not announced.

CREATE TRIGGER "api_keys_notify_cache_insert" AFTER INSERT ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261122120000_api_keys_notify_on_insert' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
