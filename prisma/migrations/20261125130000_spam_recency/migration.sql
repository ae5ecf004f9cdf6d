-- Spam scoring reads a batch of numbers and only their reports inside the recency
-- horizon (three years): (e164, reported_on) bounds that scan in the index, so reports
-- too old to count are never fetched. It replaces the (e164) index, its prefix.
-- The new index is built before the old one goes, so lookups never lack one.

-- CreateIndex
CREATE INDEX "spam_reports_e164_reported_on_idx" ON "spam_reports"("e164", "reported_on");

-- DropIndex
DROP INDEX "spam_reports_e164_idx";
