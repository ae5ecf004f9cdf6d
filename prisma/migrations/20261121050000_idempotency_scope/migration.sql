-- Idempotency keys are scoped to the API key (and the sandbox caller's network), and
-- the created lookup or job is bound to its key in the reserving transaction so a
-- retry after a crash answers with it. Records made before this migration keep
-- caller_scope '' and are never matched again (they expire within 24 hours).
-- AlterTable
ALTER TABLE "idempotency_records" DROP CONSTRAINT "idempotency_records_pkey",
ADD COLUMN     "caller_scope" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "claim_token" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "resource_id" TEXT,
ADD CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("account_id", "caller_scope", "key");

