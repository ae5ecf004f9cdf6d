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


-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261121050000_idempotency_scope' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
