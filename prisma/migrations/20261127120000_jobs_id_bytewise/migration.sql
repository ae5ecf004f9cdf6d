-- The jobs of one month are the time-ordered ids between two prefixes compared byte by
-- byte (COLLATE "C"; docs/partitioning.md): the partition upkeep and the retention sweep
-- ask for them on every sweep (monthExpired, rowDeleteCutoffs). The primary key's index
-- sorts by the database's collation and cannot answer such a range, so each of those
-- questions read the whole jobs table; this index answers it by range.
-- Built without CONCURRENTLY: jobs holds one row per job, and writes to it wait only
-- for the build (tens of milliseconds per 100,000 jobs).
CREATE INDEX "jobs_id_bytewise_idx" ON "jobs" ("id" COLLATE "C");
