-- Webhook delivery: retention purges events by age; an endpoint's deliveries are
-- held, released and cancelled together.
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

CREATE INDEX "webhook_deliveries_endpoint_id_status_idx" ON "webhook_deliveries"("endpoint_id", "status");
