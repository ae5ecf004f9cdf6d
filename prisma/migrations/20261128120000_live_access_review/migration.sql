-- The live-access review of /get-test-key (docs/going-live.md): every issued personal
-- test key also asks for live access, which an operator answers with the admin CLI
-- (`live-access approve` or `live-access decline`). The answer is kept on the request:
-- approved or declined, when, the operator's note or reason, and the live key an
-- approval issued (on the account of the request's test key). A request without a
-- decision is waiting for review. Refused requests (no key issued) ask for nothing.

ALTER TABLE "test_key_requests"
  ADD COLUMN "live_access_decision" TEXT,
  ADD COLUMN "live_access_decided_at" TIMESTAMPTZ(3),
  ADD COLUMN "live_access_note" TEXT,
  ADD COLUMN "live_access_key_id" TEXT;

ALTER TABLE "test_key_requests" ADD CONSTRAINT "test_key_requests_live_access_decision_check"
  CHECK ("live_access_decision" IS NULL OR ("live_access_decision" IN ('approved', 'declined') AND "live_access_decided_at" IS NOT NULL AND "outcome" = 'issued'));

-- The review queue: issued requests without a decision, oldest first.
CREATE INDEX "test_key_requests_live_access_pending_idx" ON "test_key_requests"("created_at") WHERE "outcome" = 'issued' AND "live_access_decision" IS NULL;

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261128120000_live_access_review' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
