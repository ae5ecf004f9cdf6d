-- Gateways keep, besides their key cache, a set of every live key's hash so that a
-- forged key is refused without a database query (services/gateway/src/cache).
-- That set must hear of a key the moment it is created, on every gateway process,
-- or a brand-new key would be refused there until the next reload: announce inserts
-- on `svc_cache` too, with the same payload as updates and deletes
-- (`key:<hash hex>`, delivered on commit). The update trigger keeps its column list
-- (migration billing): spend counters moved by reservations are not announced.

CREATE TRIGGER "api_keys_notify_cache_insert" AFTER INSERT ON "api_keys"
  FOR EACH ROW EXECUTE FUNCTION "svc_notify_cache"();
