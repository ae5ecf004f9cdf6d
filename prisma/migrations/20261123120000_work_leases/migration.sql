-- Leases that prove liveness (docs/architecture.md, "Leases and takeover bounds"):
-- a live lookup's run holds it with a short lease renewed while its worker is alive,
-- and the claim's number (attempts) is the token its completion is compared with.
-- Job chunks already have both columns (attempts, leased_until).

-- AlterTable
ALTER TABLE "lookups" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "leased_until" TIMESTAMPTZ(3);

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261123120000_work_leases' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
