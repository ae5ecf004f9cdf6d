-- Gateways cache API keys and per-account check offers in memory. Any change that
-- affects them is announced on the `svc_cache` channel (delivered on commit), so
-- caches drop stale entries at once instead of waiting for a TTL.

CREATE FUNCTION "svc_notify_cache"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  target text;
BEGIN
  IF TG_TABLE_NAME = 'api_keys' THEN
    target := 'key:' || encode(COALESCE(NEW."key_hash", OLD."key_hash"), 'hex');
  ELSIF TG_TABLE_NAME = 'accounts' THEN
    target := 'account:' || COALESCE(NEW."id", OLD."id");
  ELSIF TG_TABLE_NAME = 'account_check_settings' THEN
    target := 'account:' || COALESCE(NEW."account_id", OLD."account_id");
  ELSE
    target := 'all';
  END IF;
  PERFORM pg_notify('svc_cache', target);
  RETURN NULL;
END;
$$;

CREATE TRIGGER "api_keys_notify_cache" AFTER UPDATE OR DELETE ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();

-- Only the columns a cached key record carries; balance movements do not notify.
CREATE TRIGGER "accounts_notify_cache" AFTER UPDATE OF "realtime_enabled", "retention_days", "require_ip_allowlist", "is_sandbox" OR DELETE ON "accounts"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();

CREATE TRIGGER "account_check_settings_notify_cache" AFTER INSERT OR UPDATE OR DELETE ON "account_check_settings"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();

CREATE TRIGGER "check_prices_notify_cache" AFTER INSERT OR UPDATE OR DELETE ON "check_prices"
  FOR EACH STATEMENT EXECUTE FUNCTION "svc_notify_cache"();

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121010000_cache_invalidation' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
