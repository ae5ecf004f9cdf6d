-- Leases that prove liveness (docs/architecture.md, "Leases and takeover bounds"):
-- a live lookup's run holds it with a short lease renewed while its worker is alive,
-- and the claim's number (attempts) is the token its completion is compared with.
-- Job chunks already have both columns (attempts, leased_until).

-- AlterTable
ALTER TABLE "lookups" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "leased_until" TIMESTAMPTZ(3);
