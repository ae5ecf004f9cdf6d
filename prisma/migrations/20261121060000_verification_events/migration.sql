-- A URL change looks up the endpoint's latest challenge (webhook_endpoints.url_changed_at
-- must pass it). Partial: only verification events, a small share of all events, so the
-- hot event inserts are not slowed. Prisma's schema cannot express a partial index; it
-- lives here only.
CREATE INDEX "events_verification_endpoint_idx" ON "events"("endpoint_id", "created_at") WHERE "type" = 'webhook.verification';
