-- Number-block allocations from public data (docs/carrier-importers.md): which carrier a
-- block of numbers was originally allocated to. `prefix` is the digits of the E.164 number
-- after "+" that every number of the block starts with (NANP NPA-NXX: 7 digits with the
-- country code 1, a thousands block NPA-NXX-X: 8, German and UK blocks: as allocated).
-- A lookup takes the longest stored prefix of a number. Each import replaces all rows
-- of its source in one transaction.

-- CreateTable
CREATE TABLE "carrier_blocks" (
    "prefix" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "country" TEXT NOT NULL,
    "carrier" TEXT NOT NULL,
    "effective_on" DATE,
    "import_id" TEXT NOT NULL,
    "imported_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "carrier_blocks_pkey" PRIMARY KEY ("prefix","source")
);

-- CreateTable
CREATE TABLE "carrier_imports" (
    "id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "file_sha256" TEXT NOT NULL,
    "rows_read" INTEGER NOT NULL,
    "blocks_stored" INTEGER NOT NULL,
    "blocks_replaced" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "carrier_imports_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "carrier_blocks_source_idx" ON "carrier_blocks"("source");

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261125120000_carrier_blocks' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
