-- The test-key cap (3 keys per address in 30 days) counts addresses as the mailbox
-- they reach, not as typed: `dup-x+1@example.com` and `d.up-x@gmail.com` must count
-- for `dup-x@example.com` and `dupx@gmail.com`. The rule (see docs/api-decisions.md,
-- "Keys"):
--   1. lower-case the whole address;
--   2. cut a `+tag` sub-address from the local part, for every domain (RFC 5233
--      sub-addressing; the part before `+` must not be empty);
--   3. gmail.com and googlemail.com: remove every `.` from the local part, domain
--      gmail.com (Google: dots do not matter in Gmail addresses; googlemail.com is
--      the same service);
--   4. proton.me, protonmail.com, protonmail.ch, pm.me: remove `.`, `_` and `-` from
--      the local part, domain proton.me (Proton: those characters are "transparent",
--      and one username owns its name on every Proton domain).
-- Other providers' dots are significant and are kept.
--
-- One definition, in the database: the column is generated from `email`, so every
-- row has it (existing rows are computed when the column is added, rows written by a
-- gateway that predates this migration too), and the gateway compares it with the
-- same function applied to the address asked for. The address as given stays in
-- `email` (the manual live-access review replies to it); `cap_address` is derived
-- from it and is deleted with it.

CREATE FUNCTION "svc_test_key_cap_address"(address text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE
    WHEN parts.domain IN ('gmail.com', 'googlemail.com') THEN replace(parts.local, '.', '') || '@gmail.com'
    WHEN parts.domain IN ('proton.me', 'protonmail.com', 'protonmail.ch', 'pm.me') THEN regexp_replace(parts.local, '[._-]', '', 'g') || '@proton.me'
    ELSE parts.local || '@' || parts.domain
  END
  FROM (
    SELECT regexp_replace(substring(lowered.a FROM '^(.*)@'), '^([^+]+)\+.*$', '\1') AS local,
           substring(lowered.a FROM '@([^@]*)$') AS domain
    FROM (SELECT lower(address) AS a) AS lowered
  ) AS parts
$$;

ALTER TABLE "test_key_requests"
  ADD COLUMN "cap_address" TEXT GENERATED ALWAYS AS ("svc_test_key_cap_address"("email")) STORED;

CREATE INDEX "test_key_requests_cap_address_created_at_idx" ON "test_key_requests"("cap_address", "created_at");

-- Marks this migration's own _prisma_migrations row finished inside the migration's
-- transaction: if the script commits, so does its record, even when `migrate deploy`
-- is killed right after. scripts/prisma.mjs relies on it to retry an interrupted run
-- (docs/operations.md, "Rolling out a migration"). No-op where the table is absent.
DO $$ BEGIN
  IF to_regclass('_prisma_migrations') IS NOT NULL THEN
    UPDATE "_prisma_migrations" SET "finished_at" = now()
    WHERE "migration_name" = '20261122110000_test_key_cap_address' AND "finished_at" IS NULL AND "rolled_back_at" IS NULL;
  END IF;
END $$;
